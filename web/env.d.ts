// Stylesheets are bundled by Bun.build (imported for their side effect).
declare module "*.css";
