// Stylesheets are bundled by Bun.build (imported for their side effect).
declare module "*.css";
// Markdown imported as text (`import page from "./x.md" with { type: "text" }`, the help pages): Bun inlines it.
declare module "*.md" {
  const text: string;
  export default text;
}
