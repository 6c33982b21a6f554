// Types of scripts/install-just.mjs (plain JavaScript: it runs at npm install, before type
// stripping is known to be available), for the tests that import its constants.
export declare const JUST_VERSION: string;
/** Where the pinned `just` is installed for the tests. */
export declare const JUST_DIR: string;
/** Installs it if missing; returns the binary's path. */
export declare function installJust(): string;
