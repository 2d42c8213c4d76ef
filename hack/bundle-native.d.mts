import type { BuildOptions } from 'esbuild';

export declare const sshBundleOptions: Required<Pick<BuildOptions, 'define' | 'plugins'>>;
