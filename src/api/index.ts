export * from './constants.js';
export * from './run-pod.js';
export * from './conditions.js';
export * from './meta.js';
export * from './workflow.js';
export * from './issuerun.js';
export * from './review.js';
export * from './crd.js';
export { toStructuralSchema, type JSONSchemaProps } from './structural.js';
