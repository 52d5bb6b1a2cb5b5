// What prpd reads from a page (src/browser/page.rs evaluates this in the page): its address,
// title, HTTP status and interactive elements, each with locator candidates. Returns plain
// JSON; prpd decides what to keep.
(() => {
  const LIMIT = 300;
  const escape = (value) => (window.CSS && CSS.escape) ? CSS.escape(value) : value;
  const clean = (value) => (value || '').replace(/\s+/g, ' ').trim().slice(0, 160);
  const cssPath = (element) => {
    const parts = [];
    let node = element;
    while (node && node.nodeType === 1 && node !== document.documentElement && parts.length < 6) {
      if (node.id) {
        parts.unshift('#' + escape(node.id));
        break;
      }
      let part = node.localName;
      const parent = node.parentElement;
      if (parent) {
        const same = Array.from(parent.children).filter((child) => child.localName === node.localName);
        if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(node) + 1) + ')';
      }
      parts.unshift(part);
      node = parent;
    }
    return parts.join(' > ');
  };
  const kindOf = (element) => {
    switch (element.localName) {
      case 'a': return 'link';
      case 'button': return 'button';
      case 'input':
        return ['submit', 'button', 'reset', 'image'].includes(element.type) ? 'button' : 'input';
      case 'textarea': return 'textarea';
      case 'select': return 'select';
      case 'form': return 'form';
    }
    const role = element.getAttribute('role');
    return role === 'button' ? 'button' : role === 'link' ? 'link' : 'other';
  };
  const roleOf = (element, kind) => {
    const explicit = element.getAttribute('role');
    if (explicit) return explicit;
    if (kind === 'input') {
      return ({ checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton',
        search: 'searchbox' })[element.type] || 'textbox';
    }
    return ({ link: 'link', button: 'button', textarea: 'textbox', select: 'combobox',
      form: 'form' })[kind] || '';
  };
  const labelOf = (element) => {
    if (element.labels && element.labels.length) return clean(element.labels[0].innerText);
    const labelledBy = element.getAttribute('aria-labelledby');
    if (labelledBy) {
      const label = document.getElementById(labelledBy);
      if (label) return clean(label.innerText);
    }
    return '';
  };
  const forms = Array.from(document.forms);
  const elements = [];
  const selector = 'a[href], button, input:not([type=hidden]), textarea, select, form, [role=button], [role=link]';
  for (const element of document.querySelectorAll(selector)) {
    if (elements.length >= LIMIT) break;
    const kind = kindOf(element);
    if (kind !== 'form' && element.getClientRects().length === 0) continue;
    const label = labelOf(element);
    const text = kind === 'form' ? '' : clean(element.innerText || (kind === 'button' ? element.value : ''));
    const name = clean(element.getAttribute('aria-label')) || label || text
      || clean(element.getAttribute('placeholder')) || clean(element.getAttribute('title'))
      || clean(element.getAttribute('name'));
    const entry = {
      kind,
      tag: element.localName,
      text,
      role: roleOf(element, kind),
      name,
      label,
      testId: element.getAttribute('data-testid') || element.getAttribute('data-test-id')
        || element.getAttribute('data-test') || '',
      css: cssPath(element),
    };
    if (kind === 'link') entry.href = element.href || '';
    if (kind === 'form') {
      entry.action = element.action || location.href;
      entry.method = (element.getAttribute('method') || 'get').toLowerCase();
      entry.formIndex = forms.indexOf(element);
    } else if (element.form) {
      entry.formIndex = forms.indexOf(element.form);
    }
    if (kind === 'input' || kind === 'textarea' || kind === 'select') {
      entry.inputType = element.type || element.localName;
      entry.fieldName = element.getAttribute('name') || '';
      entry.required = element.required === true;
      for (const attribute of ['min', 'max', 'minlength', 'maxlength', 'pattern', 'placeholder']) {
        const value = element.getAttribute(attribute);
        if (value !== null && value !== '') entry[attribute] = value;
      }
    }
    elements.push(entry);
  }
  const navigation = performance.getEntriesByType('navigation')[0];
  return {
    url: location.href,
    title: clean(document.title),
    status: navigation && navigation.responseStatus ? navigation.responseStatus : 0,
    elements,
  };
})()
