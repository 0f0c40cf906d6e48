// A page loaded on first use: its code is a separate chunk (Bun's `splitting`), so tool pages do not weigh on the
// app's first load; a spinner stands in while the chunk arrives.
import { lazy, Suspense, type ComponentType } from "react";
import { LoadingState } from "./states";

export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  const Page = lazy(async () => ({ default: await load() }));
  return function LazyPage(props: P) {
    return (
      <Suspense fallback={<LoadingState />}>
        <Page {...props} />
      </Suspense>
    );
  };
}
