// `npm run chaos`: the entry point lives here so that the bundle hack/run-ts.sh writes sits
// one folder below the repository, where bench/reconcile-env.ts finds it. The suite is
// test/chaos/ (main.ts says how to call it).
import '../test/chaos/main.js';
