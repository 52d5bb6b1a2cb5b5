// A tiny linter so the example needs nothing from the network: it flags `var`, `console.log`
// and lines over 100 characters in src/ and test/, and prints an ESLint-style summary.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const rules = [
  [/\bvar\s/, "use let or const instead of var"],
  [/console\.log\(/, "no console.log in library code"],
  [/^.{101,}$/, "line longer than 100 characters"],
];

let errors = 0;
for (const dir of ["src", "test"]) {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".js")) continue;
    const path = join(dir, name);
    readFileSync(path, "utf8").split("\n").forEach((line, index) => {
      for (const [pattern, message] of rules) {
        if (pattern.test(line)) {
          errors += 1;
          process.stdout.write(`${path}:${index + 1}: error: ${message}\n`);
        }
      }
    });
  }
}
if (errors > 0) {
  process.stdout.write(`\n✖ ${errors} problems (${errors} errors, 0 warnings)\n`);
  process.exit(1);
}
process.stdout.write("lint: 0 problems\n");
