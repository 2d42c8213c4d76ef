// The UserCluster that `lorenz` commands build from the kubeconfig, for the CLI tests: user
// alice, namespace team-a, one server, and whatever fake apiserver client the test gives it.
import { KubeConfig } from '@kubernetes/client-node';
import type { UserCluster } from '../../../src/cli/runs/kube.js';
import type { KubeClient } from '../../../src/controller/runtime/client.js';

export function userCluster(client: KubeClient): UserCluster {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443' }],
    users: [{ name: 'alice', token: 't' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'alice', namespace: 'team-a' }],
    currentContext: 'c',
  });
  return { kubeConfig, client, namespace: 'team-a', token: async () => 't' };
}
