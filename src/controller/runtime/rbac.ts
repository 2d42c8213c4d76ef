import { GROUP, ISSUERUN_PLURAL, WORKFLOW_PLURAL } from '../../api/constants.js';

/**
 * The one list of what the controller may do. config/rbac/*.yaml is generated from it
 * (hack/gen-crds.ts) and the Helm chart renders the same rules, so a verb added here reaches
 * every install, and a verb missing here fails the integration tests (they impersonate the
 * controller's service account), not a user.
 */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const READ = ['get', 'list', 'watch'];

/**
 * The controller's rules on namespaced resources: cluster-wide, or, with --namespace (the
 * chart's watchNamespace), granted by a Role in that namespace only.
 */
export const NAMESPACED_CONTROLLER_RULES: readonly PolicyRule[] = [
  // create: the dispatcher makes one IssueRun per issue; patch: it cancels them and moves their
  // issue state; delete: ttlSecondsAfterFinished, and a finished run whose issue came back.
  {
    apiGroups: [GROUP],
    resources: [ISSUERUN_PLURAL],
    verbs: [...READ, 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: [GROUP], resources: [WORKFLOW_PLURAL], verbs: [...READ, 'update', 'patch'] },
  {
    apiGroups: [GROUP],
    resources: [`${ISSUERUN_PLURAL}/status`, `${WORKFLOW_PLURAL}/status`],
    verbs: ['get', 'update', 'patch'],
  },
  {
    apiGroups: [GROUP],
    resources: [`${ISSUERUN_PLURAL}/finalizers`, `${WORKFLOW_PLURAL}/finalizers`],
    // patch: the archiver adds and removes its finalizer (lorenz.dev/archive) by patch.
    verbs: ['update', 'patch'],
  },
  // patch: the issue-state annotation the downward API projects into run Pods.
  { apiGroups: [''], resources: ['pods'], verbs: [...READ, 'create', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
  { apiGroups: [''], resources: ['configmaps'], verbs: [...READ, 'create', 'delete'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: [...READ, 'create', 'delete'] },
  // list: the archiver reads a run's Events (and its Pods') into the archive.
  { apiGroups: [''], resources: ['events'], verbs: ['list', 'create', 'patch'] },
  // get (never list or watch, so no Secret can be enumerated): the one a Workflow names in
  // spec.trackerSecretRef; create and delete: each attempt's agent-tools token Secret.
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'delete'] },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
  // get: the one a Workflow's workspace claim template names, before its first claim is
  // made (a claim of a missing class stays Pending with nothing on the IssueRun to say why).
  // list: a claim template that names no class uses the default one, whose driver a snapshot
  // source needs a VolumeSnapshotClass for (docs/snapshots.md).
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list'] },
  // Snapshot sources: get the VolumeSnapshot a run starts from (ready? here?) and list the
  // classes, whether one serves the claim's driver. Warm workspaces (docs/snapshots.md): create
  // the snapshot of a warm-up's claim, list a Workflow's warm snapshots and delete the ones no
  // run needs any more (watch goes with list: the controller keeps no cache of them today).
  {
    apiGroups: ['snapshot.storage.k8s.io'],
    resources: ['volumesnapshots'],
    verbs: [...READ, 'create', 'delete'],
  },
  {
    apiGroups: ['snapshot.storage.k8s.io'],
    resources: ['volumesnapshotclasses'],
    verbs: ['list'],
  },
  // Kueue (docs/queues.md), read only: get the LocalQueue spec.queueName names before the
  // first Pod is made; list Workloads, to say why Kueue holds a queued attempt.
  { apiGroups: ['kueue.x-k8s.io'], resources: ['localqueues'], verbs: ['get'] },
  { apiGroups: ['kueue.x-k8s.io'], resources: ['workloads'], verbs: ['list'] },
];

/**
 * The read API's reviews. TokenReviews and SubjectAccessReviews are cluster-scoped, so a Role
 * cannot grant them: with watchNamespace the chart grants these two (and nothing else) in a
 * ClusterRole of their own, or the read API could check no caller and would answer 503.
 */
export const REVIEW_RULES: readonly PolicyRule[] = [
  // create: the archive's read API checks each caller's token (TokenReview) and what that
  // caller may list (SubjectAccessReview), so it shows nobody more than their RBAC does.
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  {
    apiGroups: ['authorization.k8s.io'],
    resources: ['subjectaccessreviews'],
    verbs: ['create'],
  },
];

/** Every rule of the controller, as one ClusterRole grants them when it watches every namespace. */
export const CONTROLLER_RULES: readonly PolicyRule[] = [
  ...NAMESPACED_CONTROLLER_RULES,
  ...REVIEW_RULES,
];

/** Rules for the leader election Lease, granted only in the controller's own namespace. */
export const LEADER_ELECTION_RULES: readonly PolicyRule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
];

export interface RbacOptions {
  namespace: string;
  serviceAccountName: string;
  /** Name of the ClusterRole, the leader election Role and their bindings' prefix. */
  name: string;
}

export const DEFAULT_RBAC: RbacOptions = {
  namespace: 'lorenz-system',
  serviceAccountName: 'lorenz-controller',
  name: 'lorenz-controller',
};

type Manifest = Record<string, unknown>;

function labels(): Record<string, string> {
  return { 'app.kubernetes.io/name': 'lorenz', 'app.kubernetes.io/component': 'controller' };
}

/** The RBAC objects by file name (config/rbac/<file>). */
export function rbacManifests(options: RbacOptions = DEFAULT_RBAC): Record<string, Manifest> {
  const subject = {
    kind: 'ServiceAccount',
    name: options.serviceAccountName,
    namespace: options.namespace,
  };
  const leaderElectionName = `${options.name}-leader-election`;
  return {
    'service_account.yaml': {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name: options.serviceAccountName,
        namespace: options.namespace,
        labels: labels(),
      },
      // The controller needs its token; run Pods use their own service account without one.
    },
    'role.yaml': {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: options.name, labels: labels() },
      rules: CONTROLLER_RULES,
    },
    'role_binding.yaml': {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: options.name, labels: labels() },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: options.name },
      subjects: [subject],
    },
    'leader_election_role.yaml': {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: leaderElectionName, namespace: options.namespace, labels: labels() },
      rules: LEADER_ELECTION_RULES,
    },
    'leader_election_role_binding.yaml': {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: leaderElectionName, namespace: options.namespace, labels: labels() },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: leaderElectionName },
      subjects: [subject],
    },
  };
}
