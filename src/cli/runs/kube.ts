import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient, type KubeClient } from '../../controller/runtime/client.js';

/** The user's cluster, as kubectl reads it: --kubeconfig, else $KUBECONFIG, else ~/.kube/config. */
export interface UserCluster {
  kubeConfig: KubeConfig;
  client: KubeClient;
  /** The current context's namespace, else `default` (what kubectl uses without -n). */
  namespace: string;
  /** The user's bearer token, when the kubeconfig has one (a token or an exec plugin). */
  token(): Promise<string | undefined>;
}

export function userCluster(kubeconfig: string | undefined): UserCluster {
  const kubeConfig = new KubeConfig();
  if (kubeconfig) kubeConfig.loadFromFile(kubeconfig);
  else kubeConfig.loadFromDefault();
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  return {
    kubeConfig,
    client: createKubeClient(kubeConfig),
    namespace: context?.namespace || 'default',
    async token() {
      const options: { headers?: Record<string, unknown> } = {};
      await kubeConfig.applyToHTTPSOptions(options);
      const header = options.headers?.Authorization ?? options.headers?.authorization;
      const match = typeof header === 'string' ? /^Bearer\s+(\S+)/i.exec(header) : null;
      return match?.[1];
    },
  };
}
