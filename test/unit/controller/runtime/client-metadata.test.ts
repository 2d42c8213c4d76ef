// Metadata-only answers (ACCEPT_METADATA_ONLY) parsed without their managed fields.
import { describe, expect, it } from 'vitest';
import { parseMetadataOnly } from '../../../../src/controller/runtime/client.js';

/** As kube-apiserver writes a PartialObjectMetadata: ObjectMeta's fields in Go's order. */
const answer = (metadata: Record<string, unknown>) =>
  JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata });

const metadata = {
  name: 'run-1-0-1',
  namespace: 'ns',
  uid: 'u-1',
  resourceVersion: '4711',
  creationTimestamp: '2026-12-06T10:00:00Z',
  labels: { app: 'lorenz' },
  annotations: { note: 'a value with ,"managedFields":[ inside it' },
  ownerReferences: [{ apiVersion: 'lorenz.dev/v1alpha1', kind: 'IssueRun', name: 'run-1' }],
};
const managedFields = [
  { manager: 'lorenz', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
];

describe('parseMetadataOnly', () => {
  it('drops managedFields and keeps every other field', () => {
    // As the apiserver sends it: a newline after the object.
    expect(parseMetadataOnly(`${answer({ ...metadata, managedFields })}\n`)).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata,
    });
  });

  it('parses an answer without managed fields, or of another kind, whole', () => {
    expect(parseMetadataOnly(answer(metadata))).toEqual(JSON.parse(answer(metadata)));
    const pod = JSON.stringify({ kind: 'Pod', metadata: { name: 'p', managedFields }, spec: {} });
    expect(parseMetadataOnly(pod)).toEqual(JSON.parse(pod));
  });

  it('parses whole what is laid out otherwise (managedFields not last)', () => {
    for (const text of [
      answer({ managedFields, name: 'late', resourceVersion: '9' }),
      answer({ name: 'late', managedFields, resourceVersion: '9' }),
    ])
      expect(parseMetadataOnly(text)).toEqual(JSON.parse(text));
  });

  it('answers an empty body with undefined and text that is not JSON as it is', () => {
    expect(parseMetadataOnly('')).toBeUndefined();
    expect(parseMetadataOnly('not json')).toBe('not json');
  });
});
