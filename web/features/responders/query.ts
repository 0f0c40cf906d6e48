// A raw query string as name/value pairs in order, percent- and `+`-decoded (as scripts see it, supplement §11.6.1,
// but keeping repeats); a malformed escape is shown as it is.
const decode = (s: string) => {
  const plus = s.replace(/\+/g, " ");
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
};

export function decodeQuery(rawQuery: string): [string, string][] {
  return rawQuery
    .split("&")
    .filter((p) => p !== "")
    .map((p) => {
      const eq = p.indexOf("=");
      return eq === -1 ? [decode(p), ""] : [decode(p.slice(0, eq)), decode(p.slice(eq + 1))];
    });
}
