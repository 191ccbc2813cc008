/**
 * Run before each test file of test/sandbox and test/api (vitest's `setupFiles`), which share one
 * module graph per worker: what those files keep per file is set up and checked here, since a hook
 * or override at a shared module's top level would run for the first file only.
 * - The sandbox fixture's options: a file's top-level `test.override` replaces them for every file
 *   after it in the worker, so each file starts from the defaults.
 * - The responses the file's sandboxes recorded, checked against the API description after it.
 * - The client's connection pools (one per origin), closed after it.
 */
import { afterAll } from "vitest";
import { closeConnectionPools } from "../../src/api/create-client.ts";
import { checkRecordedShapes, recorded, test } from "./sandbox/fixture.ts";

test.override({ sandboxOptions: {} });
recorded.length = 0;
afterAll(checkRecordedShapes);
afterAll(() => closeConnectionPools());
