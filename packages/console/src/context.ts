import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { clusterIdOf, type Call, type Cluster, type Me, type Operator } from './api';

/** Who is signed in and what they may do: the API enforces it; the console only hides controls. */
export interface Session {
  call: Call;
  me: Me;
  clusters: Cluster[];
  reloadClusters: () => void;
  /** Forgets the key and shows the sign-in form with `why`. */
  signOut: (why?: string) => void;
  /** A CSV export of `path` (under /api/v1/) saved as `filename`. */
  download: (path: string, filename: string) => Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}

/** An admin limited to no cluster: manages clusters, operators, and reads the audit trail. */
export const isGlobalAdmin = (me: Operator): boolean => me.role === 'admin' && me.clusters.length === 0;

/** May change users (and device reports) of this cluster. */
export const canWriteCluster = (me: Operator, clusterId: number): boolean =>
  me.role === 'admin' && (me.clusters.length === 0 || me.clusters.some((u) => clusterIdOf(u) === clusterId));
