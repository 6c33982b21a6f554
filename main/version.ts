// Grove's version, shown to MCP clients as serverInfo.version and in `grove --version`.
export const GROVE_VERSION = '0.1.0';
