/** Where a container's logs are, for the logs endpoint: one file per attempt. */
export interface ContainerLogs {
  /** Log files of the container's attempts, oldest first. */
  attempts: string[];
  /** True while the latest attempt's process lives: `follow` waits for more output. */
  running: boolean;
  /** Why there is nothing to show yet (the container's waiting reason). */
  waiting?: string;
}

export type LogRegistry = Map<string, ContainerLogs>;

export const logKey = (namespace: string, pod: string, container: string): string =>
  `${namespace}/${pod}/${container}`;
