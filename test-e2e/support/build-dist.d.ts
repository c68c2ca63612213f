/** The jest globalSetup in build-dist.js, and the build it runs, for the benchmarks' children. */
declare function buildDist(): Promise<void>;
declare namespace buildDist {
  function buildNodeDist(needs: string): void;
}
export = buildDist;
