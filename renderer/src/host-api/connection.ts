// The health of the link between the renderer and the host, for transports that can lose it (the
// headless HTTP one). Kept beside HostApi rather than in it: the Electron preload cannot disconnect.
export type ConnectionState =
  | { state: 'connecting' }
  | { state: 'open' }
  | {
      state: 'reconnecting';
      /** Why the link is down, in words a user can act on. */
      message: string;
      /** When the next attempt happens (epoch milliseconds). */
      retryAt: number;
    }
  | {
      /** The transport cannot work at all (e.g. no token); nothing will be retried. */
      state: 'failed';
      message: string;
    };

export type ConnectionListener = (state: ConnectionState) => void;

export interface ConnectionSource {
  connectionState(): ConnectionState;
  onConnectionChange(listener: ConnectionListener): () => void;
}
