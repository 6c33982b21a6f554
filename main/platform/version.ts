// Grove's version, shown to MCP clients as serverInfo.version, in `grove --version`, and written by
// snapshot_state as the state file's `cli_version`. One source: package.json's `version`, read at
// build time by the bundlers and at run time by Node (JSON modules), so the two cannot drift.
import packageJson from '../../package.json' with { type: 'json' };

export const GROVE_VERSION: string = packageJson.version;
