// The UI's CSP lists are a copy of the API's (web/ does not import server code); this keeps them from drifting:
// a keyword, sandbox token or directive added on one side only fails here.
import { expect, test } from "bun:test";
import * as api from "../../../src/features/csp/directives";
import { DIRECTIVES, KEYWORDS, SANDBOX } from "./directives";

test("the editor's keywords, sandbox tokens and directives are the API's", () => {
  expect([...KEYWORDS].sort()).toEqual([...api.KEYWORDS].sort());
  expect([...SANDBOX].sort()).toEqual([...api.SANDBOX_TOKENS].sort());
  expect(DIRECTIVES.map((d): string => d.name).sort()).toEqual([...api.DIRECTIVE_NAMES].sort());
});
