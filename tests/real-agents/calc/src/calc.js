/** The sum of two numbers. */
export function add(a, b) {
  return a + b;
}
