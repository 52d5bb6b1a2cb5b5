// prpd's dashboard: live updates, the iterations opened on demand, and the two actions.
// The token comes in the URL's fragment (#token=…), is kept for this tab only and sent in a
// header; the fragment is then taken off the address bar.
(function () {
  "use strict";
  var KEY = "prpd-token";
  var found = /(?:^#|&)token=([0-9a-f]{64})/.exec(location.hash);
  if (found) {
    sessionStorage.setItem(KEY, found[1]);
    history.replaceState(null, "", location.pathname + location.search);
  }

  function flash(text, ok) {
    var line = document.getElementById("flash");
    line.textContent = text;
    line.className = ok ? "ok" : "error";
  }

  function load(details) {
    var target = details.querySelector(".lazy");
    if (!target || target.dataset.loaded) return;
    target.dataset.loaded = "1";
    fetch(details.dataset.src).then(function (response) {
      return response.text().then(function (text) {
        if (!response.ok) throw new Error(text);
        // The fragment is the server's own escaped HTML.
        target.innerHTML = text;
      });
    }).catch(function (error) {
      delete target.dataset.loaded;
      target.textContent = "Could not load: " + error.message;
    });
  }

  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (details.matches && details.matches("details.iteration") && details.open) load(details);
  }, true);

  // A live update replaces `main` with a fresh copy of the page's, keeping the iterations a
  // person opened (and what they loaded). It waits while a button awaits its confirming click,
  // so the second click never lands on a button that took the first one's place.
  var busy = false;
  var again = false;
  function refresh() {
    if (busy || document.querySelector("button[data-armed]")) { again = true; return; }
    busy = true;
    fetch(location.pathname, { cache: "no-store" }).then(function (response) {
      if (!response.ok) return;
      return response.text().then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html").querySelector("main");
        var current = document.querySelector("main");
        if (!fresh || !current || document.querySelector("button[data-armed]")) {
          again = true;
          return;
        }
        current.querySelectorAll("details[open][data-iteration]").forEach(function (open) {
          var details = fresh.querySelector('details[data-iteration="' + open.dataset.iteration + '"]');
          if (!details) return;
          details.open = true;
          var loaded = open.querySelector(".lazy[data-loaded]");
          var empty = details.querySelector(".lazy");
          if (loaded && empty) empty.replaceWith(loaded);
        });
        current.replaceWith(fresh);
        fresh.querySelectorAll("details[open][data-iteration]").forEach(load);
      });
    }).finally(function () {
      busy = false;
      if (again) { again = false; refresh(); }
    });
  }

  if (window.EventSource) {
    var live = document.getElementById("live");
    var run = /^\/runs\/([^/]+)$/.exec(location.pathname);
    var source = new EventSource("/events" + (run ? "?run=" + run[1] : ""));
    source.addEventListener("open", function () { live.className = "on"; live.title = "live"; });
    source.addEventListener("error", function () { live.className = "off"; live.title = "reconnecting"; });
    source.addEventListener("change", function (event) {
      var main = document.querySelector("main");
      if (main && main.dataset.version !== event.data) refresh();
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-action]");
    if (!button) return;
    if (button.dataset.confirm && !button.dataset.armed) {
      button.dataset.armed = "1";
      button.dataset.label = button.textContent;
      button.textContent = button.dataset.confirm;
      setTimeout(function () {
        delete button.dataset.armed;
        button.textContent = button.dataset.label;
        if (again) { again = false; refresh(); }
      }, 5000);
      return;
    }
    var token = sessionStorage.getItem(KEY);
    if (!token) {
      flash("This tab has no token: open the URL `prpd ui` printed (it ends in #token=…).", false);
      return;
    }
    delete button.dataset.armed;
    button.disabled = true;
    fetch(button.dataset.action, { method: "POST", headers: { "X-Prpd-Token": token } })
      .then(function (response) {
        return response.json().then(function (answer) { flash(answer.message, answer.ok); });
      })
      .catch(function (error) { flash("The dashboard did not answer: " + error.message, false); })
      .finally(function () { button.disabled = false; refresh(); });
  });
})();
