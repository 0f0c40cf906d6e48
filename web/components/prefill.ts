// Fields that start prefilled ("https://" in a URL box, "/" in a path box) must not double their prefix when the
// user types or pastes a whole value after it: "https://http://host/" and "//orders" are what the caret at the end
// of the prefill gives. These normalise such input as it is typed (used by the fields' onChange).

const SCHEME_BEFORE_SCHEME = /^\s*[a-z][a-z0-9+.-]*:\/\/\s*(?=[a-z][a-z0-9+.-]*:\/\/)/i;

/** "https://http://host/" → "http://host/": a scheme typed or pasted after the prefilled one replaces it. */
export function dropDoubledScheme(value: string): string {
  let v = value;
  while (SCHEME_BEFORE_SCHEME.test(v)) v = v.replace(SCHEME_BEFORE_SCHEME, "");
  return v;
}

/** "//orders" → "/orders": a path typed with its own "/" after the prefilled one. */
export function dropDoubledSlash(value: string): string {
  return value.replace(/^(\s*)\/{2,}/, "$1/");
}
