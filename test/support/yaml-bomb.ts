// A "billion laughs" YAML document: each key nests nine aliases of the one before, about 10^9
// strings if expanded. Parsers must refuse it rather than expand it.
export const YAML_BOMB = [
  'a: &a [x, x, x, x, x, x, x, x, x]',
  ...'bcdefghi'
    .split('')
    .map(
      (name, index) => `${name}: &${name} [${Array(9).fill(`*${'abcdefgh'[index]}`).join(', ')}]`,
    ),
].join('\n');

/**
 * YAML that parses to nothing a reader may use, each case as `[what it is, the YAML, the
 * reason the parser gives]`: every reader of YAML (WORKFLOW.md front matter, issue files)
 * refuses both, quickly, with that reason.
 */
export const UNSOUND_YAML: [string, string, string][] = [
  [
    'an unresolved alias',
    'hooks: *nowhere',
    'alias *nowhere refers to no anchor &nowhere before it',
  ],
  ['an alias bomb', YAML_BOMB, 'aliases expand more than 100 times (an alias bomb?)'],
];
