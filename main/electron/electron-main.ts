// Electron main process entry (placeholder until the Electron shell issue).
import { app } from 'electron';

void app.whenReady();
