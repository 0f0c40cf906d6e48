// The scenarios of loop-delay.ts, in the order it runs them (compare.ts runs each one before and after).
export const SCENARIOS = [
  "body-9.5MiB-401",
  "preview-160k-tags",
  "import-160k-tags",
  "import-20k-policies",
  "import-kdf-max",
  "import-kdf-doc",
  "key-export-8M",
  "key-export-1M",
  "csp-evaluate-1.1MB",
  "csp-evaluate-64KiB",
  "key-pkcs12",
  "template-pkcs12",
  "har-40x1MB",
  "export-history-40x1MB",
  "export-passphrase",
] as const;
