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
