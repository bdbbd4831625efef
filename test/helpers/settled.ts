/**
 * Whether `p` has settled, asked at any time: a loop that polls a port stops once the process it
 * waits on has ended. A call, not a flag a callback sets: TypeScript would narrow such a flag to the
 * value it starts with, as if nothing could change it between two reads.
 */
export function settledFlag(p: Promise<unknown>): () => boolean {
  let settled = false;
  const done = () => {
    settled = true;
  };
  void p.then(done, done);
  return () => settled;
}
