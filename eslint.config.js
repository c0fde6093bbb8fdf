// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "bin/", "config/", "bench/results/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // node:test's describe/it return promises the runner tracks; tests may build loosely-typed objects.
    files: ["test/**/*.ts"],
    rules: { "@typescript-eslint/no-floating-promises": "off", "@typescript-eslint/no-explicit-any": "off" },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
);
