import { useCallback, useEffect, useState } from 'preact/hooks';
import { errorText } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change; an answer that arrives after a newer request is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ data: s.data, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (e: unknown) => current && setState({ error: errorText(e), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** The hash route: "#/users/12?x=1" → path "/users/12", params x=1. */
export function currentRoute(): { path: string; params: URLSearchParams } {
  const hash = location.hash.replace(/^#/, '') || '/clusters';
  const [path = '/clusters', search = ''] = hash.split('?', 2);
  return { path, params: new URLSearchParams(search) };
}

export function useRoute(): { path: string; params: URLSearchParams } {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const onChange = () => setRoute(currentRoute());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function navigate(path: string, params?: Record<string, string | number | undefined>): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  location.hash = `#${path}${s ? `?${s}` : ''}`;
}

/** What the browser's tab, history and window list show for a page heading. */
export const titleFor = (heading: string | undefined): string =>
  heading ? `${heading} · Cairn console` : 'Cairn console';

/**
 * Keeps document.title equal to the page's h1 inside `container`, also when the heading changes
 * after it loads ("User alice" once the user is read): one place, so no page can forget it.
 */
export function useTitleFromHeading(container: () => HTMLElement | null): void {
  useEffect(() => {
    const root = container();
    if (!root) return;
    const update = () => {
      const title = titleFor(root.querySelector('h1')?.textContent?.trim());
      if (document.title !== title) document.title = title;
    };
    update();
    const observer = new MutationObserver(update);
    observer.observe(root, { subtree: true, childList: true, characterData: true });
    return () => observer.disconnect();
  }, []);
}
