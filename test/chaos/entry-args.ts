// What a child process of the chaos suite starts from: its arguments, a JSON object in argv,
// and the kubeconfig they name.
import { KubeConfig } from '@kubernetes/client-node';

/** What every child's arguments carry: the kubeconfig file it reaches the apiserver with. */
export interface EntryArgs {
  kubeconfig: string;
}

export function entryArgs<Args extends EntryArgs>(): {
  args: Args;
  kubeConfig: KubeConfig;
} {
  const args = JSON.parse(process.argv[2] ?? '{}') as Args;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(args.kubeconfig);
  return { args, kubeConfig };
}
