// Command lines of the control-plane processes: pure data, so they can be read and tested
// without starting anything.
import { join } from 'node:path';
import type { ClusterPki } from './certs.js';

export interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
}

export function etcdArgs(dataDir: string, ports: Ports): string[] {
  const client = `http://127.0.0.1:${ports.etcdClient}`;
  const peer = `http://127.0.0.1:${ports.etcdPeer}`;
  return [
    '--name=lorenz',
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=lorenz=${peer}`,
    '--initial-cluster-state=new',
    // Throwaway data: durability costs fsyncs a shared 2-core machine cannot spare.
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

export const SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';

export function apiserverArgs(pki: ClusterPki, ports: Ports, extra: string[] = []): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${ports.apiserver}`,
    `--tls-cert-file=${pki.apiserver.certPath}`,
    `--tls-private-key-file=${pki.apiserver.keyPath}`,
    `--client-ca-file=${pki.ca.certPath}`,
    '--authorization-mode=Node,RBAC',
    '--service-account-issuer=https://kubernetes.default.svc',
    `--service-account-key-file=${pki.serviceAccount.publicKeyPath}`,
    `--service-account-signing-key-file=${pki.serviceAccount.privateKeyPath}`,
    `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
    `--kubelet-client-certificate=${pki.kubeletClient.certPath}`,
    `--kubelet-client-key=${pki.kubeletClient.keyPath}`,
    `--kubelet-certificate-authority=${pki.ca.certPath}`,
    '--kubelet-preferred-address-types=InternalIP',
    '--enable-priority-and-fairness=false',
    '--profiling=false',
    ...extra,
  ];
}

/**
 * The few kube-controller-manager loops a dev cluster cannot do without:
 * - serviceaccount: the `default` ServiceAccount in every namespace, which the ServiceAccount
 *   admission plugin requires before it admits a Pod;
 * - root-ca-certificate-publisher: the kube-root-ca.crt ConfigMap projected token volumes mount;
 * - namespace: namespace deletion would otherwise hang in Terminating;
 * - garbage-collector: ownerReference cascades (the operator owns its Pods);
 * - clusterrole-aggregation: aggregated ClusterRoles (admin/edit/view pick up CRD rules);
 * - persistentvolume(claim)-protection: remove the finalizers admission puts on volumes.
 * No scheduler, no workload controllers: the process node binds Pods itself, and the
 * benchmark runs its own Job controller.
 */
export const DEFAULT_CONTROLLERS = [
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'namespace-controller',
  'garbage-collector-controller',
  'clusterrole-aggregation-controller',
  'persistentvolume-protection-controller',
  'persistentvolumeclaim-protection-controller',
];

export function controllerManagerArgs(
  pki: ClusterPki,
  kubeconfigPath: string,
  controllers: string[],
): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--controllers=${controllers.join(',')}`,
    '--leader-elect=false',
    '--use-service-account-credentials=false',
    `--service-account-private-key-file=${pki.serviceAccount.privateKeyPath}`,
    `--root-ca-file=${pki.ca.certPath}`,
    // No metrics/health endpoint: nothing scrapes it, and it would need a port of its own.
    '--secure-port=0',
  ];
}

export function stateLayout(dir: string) {
  return {
    certs: join(dir, 'certs'),
    etcdData: join(dir, 'etcd'),
    logs: join(dir, 'logs'),
    kubeconfig: join(dir, 'kubeconfig'),
    pids: join(dir, 'pids'),
  };
}
