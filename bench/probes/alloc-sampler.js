// Preloaded into a shim by `BENCH_ALLOC=1 bench/profile.ts` (node --import). The first SIGUSR2
// starts V8's sampling heap profiler with the objects young- and old-generation collections
// reclaim kept in, so the samples cover everything allocated rather than what survived; the
// second writes the samples to $ALLOC_PROFILE_FILE. Plain JavaScript: the shim runs compiled,
// without a TypeScript loader.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import process from 'node:process';

const session = new Session();
session.connect();
let sampling = false;
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.enable', () =>
      session.post('HeapProfiler.startSampling', {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      }),
    );
    return;
  }
  session.post('HeapProfiler.stopSampling', (err, result) => {
    writeFileSync(process.env.ALLOC_PROFILE_FILE, err ? JSON.stringify({ error: String(err) }) : JSON.stringify(result.profile));
  });
});
