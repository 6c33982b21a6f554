// Preload (placeholder until the Electron shell issue): will expose the typed HostApi.
export {};
