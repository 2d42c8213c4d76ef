// What a child process of the chaos suite starts from: its arguments, a JSON object in argv,
// and the kubeconfig they name.
import { KubeConfig } from '@kubernetes/client-node';

export function entryArgs<Args extends { kubeconfig: string }>(): {
  args: Args;
  kubeConfig: KubeConfig;
} {
  const args = JSON.parse(process.argv[2] ?? '{}') as Args;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(args.kubeconfig);
  return { args, kubeConfig };
}
