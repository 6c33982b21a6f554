// Vite's client types (CSS imports, import.meta.env) for the renderer bundle.
/// <reference types="vite/client" />
