// The help pages' routes (inside the shell): the index and one page per topic, loaded on demand (their chunk holds
// the Markdown renderer and every topic's text).
import { Route } from "wouter";
import { lazyPage } from "../../components/lazy-page";

const HelpIndexPage = lazyPage(() => import("./help-page").then((m) => m.HelpIndexPage));
const HelpTopicPage = lazyPage(() => import("./help-page").then((m) => m.HelpTopicPage));

export const helpRoutes = [
  <Route key="help" path="/help" component={HelpIndexPage} />,
  <Route key="help-topic" path="/help/:topic" component={HelpTopicPage} />,
];
