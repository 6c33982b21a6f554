// The Server tab's port field: the problems a typed port can have, and how the host's answer reads.
import { describe, expect, test } from 'vitest';
import { serverUrls, type ServerStatus, type WorktreeState } from '../../../shared/model.ts';
import { portOutcome, portProblem } from './port-setting.ts';

describe('portProblem', () => {
  test('accepts a whole number from 1024 to 65535', () => {
    for (const text of ['1024', '47110', ' 50000 ', '65535']) expect(portProblem(text)).toBeNull();
  });

  test('names what is wrong', () => {
    expect(portProblem('')).toBe('No port given: enter a port from 1024 to 65535.');
    expect(portProblem('abc')).toBe('“abc” is not a number: enter a port from 1024 to 65535.');
    expect(portProblem('4711.5')).toBe(
      '4711.5 is not a whole number: enter a port from 1024 to 65535.',
    );
    expect(portProblem('80')).toBe(
      'Port 80 is below 1024 (reserved for the system): enter a port from 1024 to 65535.',
    );
    expect(portProblem('70000')).toBe(
      'Port 70000 is above 65535: enter a port from 1024 to 65535.',
    );
  });
});

describe('portOutcome', () => {
  function answered(port: number, status: ServerStatus): WorktreeState {
    return {
      id: '1',
      repoId: 'r1',
      path: '/code/app',
      branch: 'main',
      isMain: true,
      port,
      portNotice: null,
      status,
      urls: serverUrls(port),
      settings: { autostart: true, requireToken: true },
      clients: [],
      runningCalls: [],
      reconcileBase: null,
      reconcileTotals: null,
    };
  }

  test('a running server restarted on the port, or on the next free one', () => {
    expect(portOutcome(5000, true, answered(5000, { state: 'running', port: 5000 }))).toEqual({
      tone: 'ok',
      text: 'Saved: the server restarted on port 5000.',
    });
    expect(portOutcome(5000, true, answered(5001, { state: 'running', port: 5001 }))).toEqual({
      tone: 'ok',
      text: 'Saved, but port 5000 was in use: the server restarted on port 5001.',
    });
  });

  test('a stopped server uses the port when it starts; a failed restart is an error', () => {
    expect(portOutcome(5000, false, answered(5000, { state: 'stopped' }))).toEqual({
      tone: 'ok',
      text: 'Saved: the server will listen on port 5000 when it starts.',
    });
    // An earlier error stays as it was: the server was not running, nothing restarted.
    expect(
      portOutcome(5000, false, answered(5000, { state: 'error', message: 'gave up' })),
    ).toEqual({ tone: 'ok', text: 'Saved: the server will listen on port 5000 when it starts.' });
    expect(
      portOutcome(5000, true, answered(5000, { state: 'error', message: 'no free port' })),
    ).toEqual({
      tone: 'error',
      text: 'Port 5000 saved, but the server did not start again: no free port',
    });
  });
});
