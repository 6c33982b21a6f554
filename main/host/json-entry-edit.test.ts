// setJsonEntry on the shapes config files come in: every byte outside Grove's entry is kept.
import { describe, expect, test } from 'vitest';
import { setJsonEntry } from './json-entry-edit.ts';

const entry = { url: 'u' };

describe('setJsonEntry', () => {
  test('an empty file becomes a new config', () => {
    expect(setJsonEntry('', 'mcpServers', 'g', entry).text).toBe(
      '{\n  "mcpServers": {\n    "g": {\n      "url": "u"\n    }\n  }\n}\n',
    );
  });

  test('a one-line object keeps its other entries on their line', () => {
    const { text } = setJsonEntry(
      '{"mcpServers": {"db": {"command": "x"}}}',
      'mcpServers',
      'g',
      entry,
    );
    expect(text).toBe('{"mcpServers": {"db": {"command": "x"},\n  "g": {\n    "url": "u"\n  }}}');
    expect(JSON.parse(text)).toEqual({ mcpServers: { db: { command: 'x' }, g: entry } });
  });

  test('an empty servers object, a missing key, CRLF and tabs', () => {
    expect(setJsonEntry('{\r\n\t"mcpServers": {}\r\n}\r\n', 'mcpServers', 'g', entry).text).toBe(
      '{\r\n\t"mcpServers": {\r\n\t\t"g": {\r\n\t\t\t"url": "u"\r\n\t\t}\r\n\t}\r\n}\r\n',
    );
    expect(setJsonEntry('{\n  "a": 1\n}\n', 'mcpServers', 'g', entry).text).toBe(
      '{\n  "a": 1,\n  "mcpServers": {\n    "g": {\n      "url": "u"\n    }\n  }\n}\n',
    );
  });

  test('the same entry again is unchanged; another value replaces only its own span', () => {
    const once = setJsonEntry(
      '{"mcpServers": {"g": {"url": "u"}, "z": 1}}',
      'mcpServers',
      'g',
      entry,
    );
    expect(once.unchanged).toBe(true);
    const moved = setJsonEntry(once.text, 'mcpServers', 'g', { url: 'v' });
    expect(moved.text).toBe('{"mcpServers": {"g": {\n  "url": "v"\n}, "z": 1}}');
  });
});
