// The certificate pages' routes (templates, private keys, the shared template view), each loaded on demand.
import { Route } from "wouter";
import { lazyPage } from "../../components/lazy-page";

const TemplatesPage = lazyPage(() => import("./templates-page").then((m) => m.TemplatesPage));
const TemplateEditorPage = lazyPage(() => import("./template-editor-page").then((m) => m.TemplateEditorPage));
const KeysPage = lazyPage(() => import("./keys/keys-page").then((m) => m.KeysPage));
const SharedTemplatePage = lazyPage(() => import("./shared-template-page").then((m) => m.SharedTemplatePage));

/** Routes inside the shell (signed in). */
export const certificateRoutes = [
  <Route key="templates" path="/certificates/templates" component={TemplatesPage} />,
  <Route key="template-new" path="/certificates/templates/new" component={TemplateEditorPage} />,
  <Route key="template" path="/certificates/templates/:id" component={TemplateEditorPage} />,
  <Route key="keys" path="/certificates/private-keys" component={KeysPage} />,
];

/** The shared view: public, outside the shell (works signed out). */
export const sharedCertificateRoutes = [<Route key="shared-template" path="/shared/certificate-templates/:id" component={SharedTemplatePage} />];
