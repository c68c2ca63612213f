import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorText, Loading } from './components';
import { errorText } from './api';

/** A component loaded on first use (its chunk, e.g. with the chart library, is fetched then). */
export function Lazy<P extends object>({ load, props }: { load: () => Promise<(p: P) => JSX.Element>; props: P }) {
  const [Component, setComponent] = useState<{ c: (p: P) => JSX.Element }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    load().then(
      (c) => setComponent({ c }),
      (e: unknown) => setError(`This page could not be loaded (${errorText(e)}); reload to try again.`),
    );
  }, [load]);
  if (error) return <ErrorText error={error} />;
  return Component ? <Component.c {...props} /> : <Loading what="the page" />;
}
