// The responder pages' routes (list, editor, one responder with its live history and Try it), each loaded on demand.
import { Route } from "wouter";
import { lazyPage } from "../../components/lazy-page";

const RespondersPage = lazyPage(() => import("./responders-page").then((m) => m.RespondersPage));
const ResponderEditorPage = lazyPage(() => import("./responder-editor-page").then((m) => m.ResponderEditorPage));
const ResponderPage = lazyPage(() => import("./responder-page").then((m) => m.ResponderPage));

/** Routes inside the shell (signed in). */
export const responderRoutes = [
  <Route key="responders" path="/responders" component={RespondersPage} />,
  <Route key="responder-new" path="/responders/new" component={ResponderEditorPage} />,
  <Route key="responder-edit" path="/responders/:id/edit" component={ResponderEditorPage} />,
  <Route key="responder" path="/responders/:id" component={ResponderPage} />,
];
