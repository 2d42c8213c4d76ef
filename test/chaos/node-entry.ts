// The process node as a process of its own (bundled by env.ts), so that the chaos suite can
// lose it: SIGKILL to it and every container process it started is a machine gone dark.
// argv: a JSON NodeArgs. SIGTERM stops it cleanly (containers killed, Node deleted).
import { startProcessNode, type ImageMap } from '../../hack/process-node/index.js';
import { entryArgs, type EntryArgs } from './entry-args.js';

export interface NodeArgs extends EntryArgs {
  server: string;
  caCertPath: string;
  caKeyPath: string;
  name: string;
  dataDir: string;
  imageMap: ImageMap;
}

const { args, kubeConfig } = entryArgs<NodeArgs>();
const node = await startProcessNode({
  controlPlane: {
    server: args.server,
    kubeConfig,
    caCertPath: args.caCertPath,
    caKeyPath: args.caKeyPath,
  },
  name: args.name,
  dataDir: args.dataDir,
  imageMap: args.imageMap,
  log: (line) => console.log(line),
});
console.log(`node ${args.name} ready`);
process.once('SIGTERM', () => {
  void node.stop().then(() => process.exit(0));
});
