import Hummingbird

/// The OpenAPI 3.1 document of every route, served at `/api/v1/openapi.json`. It lives here, as the one
/// copy, so the binary serves it without a resource bundle; the route tests check that it names every route.
/// A shape used more than once (a window, a tally row, the voting token, the place parameter, the error
/// response) is written once under `components` and referred to by `$ref`.
enum OpenAPIRoute {
    static func add(to api: RouterGroup<ServerContext>) {
        api.get("openapi.json") { _, _ in JSONBody.text(document, type: "application/json") }
    }

    static let document = #"""
        {
          "components": {
            "parameters": {
              "IdempotencyKey": {
                "description": "Makes a retried write safe (the admin writes, a vote, an anonymous ballot): a request repeated with the same key (same method, path, media type and body) within 24 hours gets the first answer again, status and body, tokens included, and records nothing twice. The same key with a different request is refused 422 (idempotency_key_reused); a retry while the first is still being answered gets 409 (idempotency_key_in_use) with Retry-After. Answers are kept in the server's memory (bounded; a restart forgets them): tokens whose answer was lost and cannot be replayed are replaced with POST /api/v1/places/{place}/voters/reissue, and the receipt of a vote whose answer was lost is fetched again with POST /api/v1/places/{place}/receipt (token) or POST /api/v1/places/{place}/ballots/receipt (credential).",
                "in": "header",
                "name": "Idempotency-Key",
                "required": false,
                "schema": {
                  "maxLength": 255,
                  "minLength": 1,
                  "pattern": "^[!-~]{1,255}$",
                  "type": "string"
                }
              },
              "PlaceID": {
                "in": "path",
                "name": "place",
                "required": true,
                "schema": {
                  "minimum": 1,
                  "type": "integer"
                }
              }
            },
            "responses": {
              "Error": {
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Error"
                    }
                  }
                },
                "description": "an error"
              }
            },
            "schemas": {
              "Candidate": {
                "properties": {
                  "candidate": {
                    "type": "integer"
                  },
                  "name": {
                    "type": "string"
                  },
                  "pledge": {
                    "type": "string"
                  },
                  "withdrawn": {
                    "type": "boolean"
                  }
                },
                "type": "object"
              },
              "CandidateRecorded": {
                "properties": {
                  "candidate": {
                    "type": "integer"
                  },
                  "event_hash": {
                    "type": "string"
                  },
                  "height": {
                    "type": "integer"
                  },
                  "index": {
                    "type": "integer"
                  },
                  "name": {
                    "type": "string"
                  },
                  "place": {
                    "type": "integer"
                  }
                },
                "type": "object"
              },
              "Error": {
                "properties": {
                  "error": {
                    "properties": {
                      "code": {
                        "type": "string"
                      },
                      "message": {
                        "type": "string"
                      }
                    },
                    "required": [
                      "code",
                      "message"
                    ],
                    "type": "object"
                  }
                },
                "required": [
                  "error"
                ],
                "type": "object"
              },
              "Place": {
                "properties": {
                  "ballot": {
                    "description": "token (each voter votes with a token) or anonymous (RFC 9474 blind-signed ballot credentials)",
                    "enum": [
                      "token",
                      "anonymous"
                    ],
                    "type": "string"
                  },
                  "ballot_key": {
                    "description": "anonymous places only: the place's RSA key (RSABSSA-SHA384-PSS-Randomized) as DER SubjectPublicKeyInfo, base64url without padding",
                    "type": "string"
                  },
                  "candidates": {
                    "type": "integer"
                  },
                  "credentials_issued": {
                    "description": "anonymous places only: ballot credentials issued so far",
                    "type": "integer"
                  },
                  "description": {
                    "type": "string"
                  },
                  "id": {
                    "type": "integer"
                  },
                  "max_candidates": {
                    "type": [
                      "integer",
                      "null"
                    ]
                  },
                  "name": {
                    "type": "string"
                  },
                  "registration": {
                    "$ref": "#/components/schemas/Window"
                  },
                  "results": {
                    "properties": {
                      "tally": {
                        "items": {
                          "$ref": "#/components/schemas/TallyRow"
                        },
                        "type": "array"
                      },
                      "turnout": {
                        "$ref": "#/components/schemas/Turnout"
                      }
                    },
                    "type": "object"
                  },
                  "results_after_close": {
                    "description": "until voting ends the public sees no count and no vote's candidate: the tally routes show no count, and the event feed and published copies show its votes (and a token place's authorisations and re-issues) as withheld events (a results embargo)",
                    "type": "boolean"
                  },
                  "status": {
                    "type": "string"
                  },
                  "voting": {
                    "$ref": "#/components/schemas/Window"
                  }
                },
                "type": "object"
              },
              "Base64URL": {
                "description": "bytes as base64url without padding (RFC 4648 section 5)",
                "pattern": "^[A-Za-z0-9_-]+$",
                "type": "string"
              },
              "ProofHashes": {
                "items": {
                  "type": "string"
                },
                "type": "array"
              },
              "Receipt": {
                "properties": {
                  "candidate": {
                    "type": "integer"
                  },
                  "checkpoint": {
                    "description": "the signed head the event is proven under (its block's, or a later one's); with vote serve --witness, with the c2sp.org/tlog-cosignature lines of the witnesses that were up",
                    "type": "string"
                  },
                  "event_hash": {
                    "type": "string"
                  },
                  "extra": {
                    "type": "string"
                  },
                  "height": {
                    "type": "integer"
                  },
                  "index": {
                    "type": "integer"
                  },
                  "place": {
                    "type": "integer"
                  },
                  "proof": {
                    "$ref": "#/components/schemas/ProofHashes"
                  },
                  "receipt": {
                    "description": "the C2SP tlog-proof text (its checkpoint as in checkpoint, cosignatures included)",
                    "type": "string"
                  },
                  "root": {
                    "type": "string"
                  },
                  "tree_size": {
                    "type": "integer"
                  }
                },
                "type": "object"
              },
              "Tally": {
                "properties": {
                  "certified_height": {
                    "description": "the block holding the results-certified event; null until certified",
                    "type": [
                      "integer",
                      "null"
                    ]
                  },
                  "embargoed": {
                    "description": "the place's results are hidden until voting ends and it has not ended: tally is empty",
                    "type": "boolean"
                  },
                  "head_hash": {
                    "type": "string"
                  },
                  "height": {
                    "type": "integer"
                  },
                  "name": {
                    "type": "string"
                  },
                  "place": {
                    "type": "integer"
                  },
                  "status": {
                    "type": "string"
                  },
                  "tally": {
                    "items": {
                      "$ref": "#/components/schemas/TallyRow"
                    },
                    "type": "array"
                  },
                  "tree_size": {
                    "type": "integer"
                  },
                  "turnout": {
                    "$ref": "#/components/schemas/Turnout"
                  }
                },
                "type": "object"
              },
              "TallyRow": {
                "properties": {
                  "candidate": {
                    "type": "integer"
                  },
                  "name": {
                    "type": "string"
                  },
                  "share": {
                    "type": "number"
                  },
                  "votes": {
                    "type": "integer"
                  },
                  "withdrawn": {
                    "type": "boolean"
                  }
                },
                "type": "object"
              },
              "Turnout": {
                "properties": {
                  "authorized": {
                    "type": "integer"
                  },
                  "issued": {
                    "description": "anonymous places only: ballot credentials issued",
                    "type": "integer"
                  },
                  "percentage": {
                    "type": "number"
                  },
                  "voted": {
                    "type": "integer"
                  }
                },
                "type": "object"
              },
              "VotingToken": {
                "description": "the voting token: 32 letters A-Z and digits 2-7 and a check character (README, Voting tokens), in groups of four separated by dashes or spaces (optional); a wrong check character is refused 400 token_mistyped. A token of 32 characters without a check character (issued before it was added) is read unchecked",
                "pattern": "^[A-Za-z2-7]{4}([- ]?[A-Za-z2-7]{4}){7}([- ]?[A-Za-z2-7])?$",
                "type": "string"
              },
              "Window": {
                "properties": {
                  "end": {
                    "type": "string"
                  },
                  "start": {
                    "type": "string"
                  }
                },
                "required": [
                  "start",
                  "end"
                ],
                "type": "object"
              }
            },
            "securitySchemes": {
              "admin": {
                "scheme": "bearer",
                "type": "http"
              }
            }
          },
          "info": {
            "description": "The ledger over HTTP (vote serve). Tokens travel only in POST bodies.",
            "title": "VoteLedger",
            "version": "1"
          },
          "openapi": "3.1.0",
          "paths": {
            "/api/v1/admin/check": {
              "get": {
                "responses": {
                  "204": {
                    "description": "the admin token is valid"
                  },
                  "401": {
                    "$ref": "#/components/responses/Error"
                  },
                  "403": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "admin": []
                  }
                ],
                "summary": "Check the admin token (the console's sign-in); records nothing"
              }
            },
            "/api/v1/events": {
              "get": {
                "description": "A page of events as JSON lines, one per event, in index order. A full page (limit events the ledger already holds) never changes: it has an ETag, Cache-Control immutable, and a Link header (rel=next) naming the next page; a shorter page reaches the head and is not cached. While a place's results are embargoed (results after-close) and its voting has not ended, each of its votes (and in a token place each authorisation and re-issue) is a withheld line: type 2, kind withheld, withheld_kind and place only, with its leaf hash as hash; a page holding one is Cache-Control no-store and has no ETag.",
                "parameters": [
                  {
                    "description": "index of the first event (the cursor: the last line's index + 1)",
                    "in": "query",
                    "name": "from",
                    "schema": {
                      "default": 0,
                      "minimum": 0,
                      "type": "integer"
                    }
                  },
                  {
                    "description": "events in the page",
                    "in": "query",
                    "name": "limit",
                    "schema": {
                      "default": 1000,
                      "maximum": 10000,
                      "minimum": 1,
                      "type": "integer"
                    }
                  },
                  {
                    "in": "header",
                    "name": "If-None-Match",
                    "schema": {
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/x-ndjson": {
                        "schema": {
                          "type": "string"
                        }
                      }
                    },
                    "description": "JSON lines"
                  },
                  "304": {
                    "description": "the full page named by If-None-Match, unchanged"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "A page of the event stream, as vote export --events prints it"
              }
            },
            "/api/v1/head": {
              "get": {
                "responses": {
                  "200": {
                    "content": {
                      "text/plain": {
                        "schema": {
                          "type": "string"
                        }
                      }
                    },
                    "description": "signed note",
                    "headers": {
                      "VoteLedger-Cosigned-By": {
                        "description": "With vote serve --witness: the witnesses whose cosignature the head carries, comma-separated",
                        "schema": {
                          "type": "string"
                        }
                      }
                    }
                  }
                },
                "summary": "The current signed head (C2SP checkpoint), as vote head prints it; with witnesses (vote serve --witness), with the c2sp.org/tlog-cosignature lines gathered on it so far"
              }
            },
            "/api/v1/key": {
              "get": {
                "responses": {
                  "200": {
                    "content": {
                      "text/plain": {
                        "schema": {
                          "type": "string"
                        }
                      }
                    },
                    "description": "C2SP signed-note verifier key: <name>+<hex key id>+<base64(0x01 || Ed25519 public key)>"
                  }
                },
                "summary": "The authority's verifier key, under the name its signed heads carry (vote head prints it)"
              }
            },
            "/api/v1/openapi.json": {
              "get": {
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object"
                        }
                      }
                    },
                    "description": "OpenAPI 3.1"
                  }
                },
                "summary": "This document"
              }
            },
            "/api/v1/places": {
              "get": {
                "parameters": [
                  {
                    "in": "query",
                    "name": "status",
                    "schema": {
                      "enum": [
                        "upcoming",
                        "registration",
                        "waiting",
                        "voting",
                        "ended"
                      ],
                      "type": "string"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "items": {
                            "$ref": "#/components/schemas/Place"
                          },
                          "type": "array"
                        }
                      }
                    },
                    "description": "places"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "Places, optionally by status"
              },
              "post": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/IdempotencyKey"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "ballot": {
                            "default": "token",
                            "description": "token (a voting token per voter), or anonymous: the server makes the place an RSA key (kept in the key directory) and each voter's token becomes an issuance code for one blind-signed ballot credential",
                            "enum": [
                              "token",
                              "anonymous"
                            ],
                            "type": "string"
                          },
                          "description": {
                            "type": "string"
                          },
                          "max_candidates": {
                            "minimum": 1,
                            "type": "integer"
                          },
                          "name": {
                            "type": "string"
                          },
                          "registration": {
                            "$ref": "#/components/schemas/Window"
                          },
                          "results": {
                            "default": "live",
                            "description": "when the public sees the counts: live, or after-close (a results embargo: until voting ends, no count on the public routes and pages, and the event feed and published copies withhold its votes' contents)",
                            "enum": [
                              "live",
                              "after-close"
                            ],
                            "type": "string"
                          },
                          "voting": {
                            "$ref": "#/components/schemas/Window"
                          }
                        },
                        "required": [
                          "name",
                          "registration",
                          "voting"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "201": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "properties": {
                            "event_hash": {
                              "type": "string"
                            },
                            "height": {
                              "type": "integer"
                            },
                            "index": {
                              "type": "integer"
                            },
                            "max_candidates": {
                              "type": [
                                "integer",
                                "null"
                              ]
                            },
                            "name": {
                              "type": "string"
                            },
                            "place": {
                              "type": "integer"
                            },
                            "registration": {
                              "$ref": "#/components/schemas/Window"
                            },
                            "voting": {
                              "$ref": "#/components/schemas/Window"
                            }
                          },
                          "type": "object"
                        }
                      }
                    },
                    "description": "created"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "401": {
                    "$ref": "#/components/responses/Error"
                  },
                  "403": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  },
                  "422": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  },
                  "503": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "admin": []
                  }
                ],
                "summary": "Create a place (admin)"
              }
            },
            "/api/v1/places/{place}": {
              "get": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Place"
                        }
                      }
                    },
                    "description": "place"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "One place"
              }
            },
            "/api/v1/places/{place}/ballots": {
              "post": {
                "description": "An anonymous place's ballot: the credential (the RFC 9474 prepared message, 64 bytes) and its signature under the place's ballot key, and nothing that names the voter. The access log records this route's requests with the time to the minute only, without request id or duration; it is not behind the per-address failure limit.",
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  },
                  {
                    "$ref": "#/components/parameters/IdempotencyKey"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "candidate": {
                            "maximum": 4294967295,
                            "minimum": 0,
                            "type": "integer"
                          },
                          "credential": {
                            "$ref": "#/components/schemas/Base64URL"
                          },
                          "signature": {
                            "$ref": "#/components/schemas/Base64URL"
                          }
                        },
                        "required": [
                          "credential",
                          "signature",
                          "candidate"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "201": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Receipt"
                        }
                      }
                    },
                    "description": "the receipt"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  },
                  "503": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "Cast an anonymous ballot"
              }
            },
            "/api/v1/places/{place}/ballots/receipt": {
              "post": {
                "description": "The receipt of the ballot cast with this credential in an anonymous place, proven under the head of the block that holds it: what the ballot was answered with, for a voter whose answer was lost. The credential is public once cast, so this is not behind the per-address failure limit. 404 ballot_not_found if no ballot was cast with it; 409 not_anonymous in a place with voting tokens.",
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "credential": {
                            "$ref": "#/components/schemas/Base64URL"
                          }
                        },
                        "required": [
                          "credential"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Receipt"
                        }
                      }
                    },
                    "description": "the receipt, as the vote was answered with it"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "The receipt of an anonymous ballot, again"
              }
            },
            "/api/v1/places/{place}/candidates": {
              "get": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "items": {
                            "$ref": "#/components/schemas/Candidate"
                          },
                          "type": "array"
                        }
                      }
                    },
                    "description": "candidates"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "A place's candidates"
              },
              "post": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  },
                  {
                    "$ref": "#/components/parameters/IdempotencyKey"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "name": {
                            "type": "string"
                          },
                          "pledge": {
                            "type": "string"
                          }
                        },
                        "required": [
                          "name"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "201": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/CandidateRecorded"
                        }
                      }
                    },
                    "description": "registered"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "401": {
                    "$ref": "#/components/responses/Error"
                  },
                  "403": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  },
                  "422": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  },
                  "503": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "admin": []
                  }
                ],
                "summary": "Register a candidate (admin)"
              }
            },
            "/api/v1/places/{place}/candidates/{candidate}/withdraw": {
              "post": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  },
                  {
                    "in": "path",
                    "name": "candidate",
                    "required": true,
                    "schema": {
                      "minimum": 1,
                      "type": "integer"
                    }
                  },
                  {
                    "$ref": "#/components/parameters/IdempotencyKey"
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/CandidateRecorded"
                        }
                      }
                    },
                    "description": "withdrawn"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "401": {
                    "$ref": "#/components/responses/Error"
                  },
                  "403": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "422": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  },
                  "503": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "admin": []
                  }
                ],
                "summary": "Withdraw a candidate (admin)"
              }
            },
            "/api/v1/places/{place}/certify": {
              "post": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  },
                  {
                    "$ref": "#/components/parameters/IdempotencyKey"
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "properties": {
                            "event_hash": {
                              "type": "string"
                            },
                            "height": {
                              "type": "integer"
                            },
                            "index": {
                              "type": "integer"
                            },
                            "place": {
                              "type": "integer"
                            },
                            "tally": {
                              "items": {
                                "properties": {
                                  "candidate": {
                                    "type": "integer"
                                  },
                                  "name": {
                                    "type": "string"
                                  },
                                  "votes": {
                                    "type": "integer"
                                  }
                                },
                                "type": "object"
                              },
                              "type": "array"
                            },
                            "tree_size": {
                              "type": "integer"
                            },
                            "turnout": {
                              "properties": {
                                "authorized": {
                                  "type": "integer"
                                },
                                "voted": {
                                  "type": "integer"
                                }
                              },
                              "type": "object"
                            }
                          },
                          "type": "object"
                        }
                      }
                    },
                    "description": "certified"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "401": {
                    "$ref": "#/components/responses/Error"
                  },
                  "403": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "422": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  },
                  "503": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "admin": []
                  }
                ],
                "summary": "Certify the results (admin, after voting closes)"
              }
            },
            "/api/v1/places/{place}/credentials": {
              "post": {
                "description": "An anonymous place's issuance: the voter's issuance code and a blinded message (as long as the ballot key's modulus); the answer is the blind signature, given only once the credential-issued event is durable. A repeated request with the same code and blinded message gets the same signature again (repeated: true) and records nothing; another blinded message with a used code is refused 409 credential_already_issued.",
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "blinded_message": {
                            "$ref": "#/components/schemas/Base64URL"
                          },
                          "code": {
                            "$ref": "#/components/schemas/VotingToken"
                          }
                        },
                        "required": [
                          "code",
                          "blinded_message"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "properties": {
                            "blind_signature": {
                              "$ref": "#/components/schemas/Base64URL"
                            },
                            "place": {
                              "type": "integer"
                            },
                            "receipt": {
                              "$ref": "#/components/schemas/Receipt",
                              "description": "the receipt of the credential-issued event; absent when repeated (nothing new was recorded)"
                            },
                            "repeated": {
                              "type": "boolean"
                            }
                          },
                          "required": [
                            "blind_signature",
                            "place",
                            "repeated"
                          ],
                          "type": "object"
                        }
                      }
                    },
                    "description": "the blind signature, and the receipt of the credential-issued event"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  },
                  "503": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "Have a ballot credential signed blind with an issuance code"
              }
            },
            "/api/v1/places/{place}/receipt": {
              "post": {
                "description": "The receipt of the vote cast with this token, proven under the head of the block that holds it: what the vote was answered with, for a voter whose answer was lost. A token not authorised in the place (unknown, of another place, replaced) gets token_not_authorized, as the vote route answers it, and counts against the address's failure limit (429 beyond it); a good token that has not voted gets 404 not_voted. An anonymous place's ballots use POST /api/v1/places/{place}/ballots/receipt.",
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "token": {
                            "$ref": "#/components/schemas/VotingToken"
                          }
                        },
                        "required": [
                          "token"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Receipt"
                        }
                      }
                    },
                    "description": "the receipt, as the vote was answered with it"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "The receipt of this token's vote, again"
              }
            },
            "/api/v1/places/{place}/status": {
              "post": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "token": {
                            "$ref": "#/components/schemas/VotingToken"
                          }
                        },
                        "required": [
                          "token"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "properties": {
                            "credential_issued": {
                              "description": "anonymous places only (the token is an issuance code): whether a credential was issued for it",
                              "type": "boolean"
                            },
                            "place": {
                              "type": "integer"
                            },
                            "voted": {
                              "description": "places with voting tokens only",
                              "type": "boolean"
                            }
                          },
                          "type": "object"
                        }
                      }
                    },
                    "description": "status"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "Has this token voted?"
              }
            },
            "/api/v1/places/{place}/tally": {
              "get": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Tally"
                        }
                      }
                    },
                    "description": "tally"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "Live tally and turnout"
              }
            },
            "/api/v1/places/{place}/voters": {
              "post": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  },
                  {
                    "$ref": "#/components/parameters/IdempotencyKey"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "voter": {
                            "type": "string"
                          }
                        },
                        "required": [
                          "voter"
                        ],
                        "type": "object"
                      }
                    },
                    "text/csv": {
                      "schema": {
                        "type": "string"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "201": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object"
                        }
                      }
                    },
                    "description": "authorised: {place, token, height, index, event_hash} for JSON; {place, tokens:[{voter, token}], rejected:[{line, code, message}], rejected_total, skipped_header} for CSV (rejected lists the first 100 lines refused, by line number; rejected_total counts them all; one identity a line; a first line naming a column, such as identity or voter, is a header: skipped, its line number in skipped_header; each voter is named as listed)"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "401": {
                    "$ref": "#/components/responses/Error"
                  },
                  "403": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  },
                  "422": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  },
                  "503": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "admin": []
                  }
                ],
                "summary": "Authorise one voter (JSON) or a CSV of identities (admin); the tokens are in the response, once"
              }
            },
            "/api/v1/places/{place}/voters/reissue": {
              "post": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  },
                  {
                    "$ref": "#/components/parameters/IdempotencyKey"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "voter": {
                            "type": "string"
                          }
                        },
                        "required": [
                          "voter"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "201": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object"
                        }
                      }
                    },
                    "description": "re-issued: {place, token, height, index, event_hash}; the voter's previous token no longer votes"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "401": {
                    "$ref": "#/components/responses/Error"
                  },
                  "403": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  },
                  "422": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  },
                  "503": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "admin": []
                  }
                ],
                "summary": "Issue a new token to an authorised voter who has not voted (admin); the old token stops working; the new one is in the response, once"
              }
            },
            "/api/v1/places/{place}/votes": {
              "post": {
                "parameters": [
                  {
                    "$ref": "#/components/parameters/PlaceID"
                  },
                  {
                    "$ref": "#/components/parameters/IdempotencyKey"
                  }
                ],
                "requestBody": {
                  "content": {
                    "application/json": {
                      "schema": {
                        "properties": {
                          "candidate": {
                            "maximum": 4294967295,
                            "minimum": 0,
                            "type": "integer"
                          },
                          "token": {
                            "$ref": "#/components/schemas/VotingToken"
                          }
                        },
                        "required": [
                          "candidate",
                          "token"
                        ],
                        "type": "object"
                      }
                    }
                  },
                  "required": true
                },
                "responses": {
                  "201": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Receipt"
                        }
                      }
                    },
                    "description": "the receipt"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  },
                  "409": {
                    "$ref": "#/components/responses/Error"
                  },
                  "413": {
                    "$ref": "#/components/responses/Error"
                  },
                  "415": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  },
                  "503": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "Cast a vote"
              }
            },
            "/api/v1/proofs/consistency": {
              "get": {
                "parameters": [
                  {
                    "in": "query",
                    "name": "from",
                    "required": true,
                    "schema": {
                      "minimum": 1,
                      "type": "integer"
                    }
                  },
                  {
                    "in": "query",
                    "name": "to",
                    "schema": {
                      "minimum": 1,
                      "type": "integer"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "properties": {
                            "from": {
                              "type": "integer"
                            },
                            "proof": {
                              "$ref": "#/components/schemas/ProofHashes"
                            },
                            "to": {
                              "type": "integer"
                            }
                          },
                          "type": "object"
                        }
                      }
                    },
                    "description": "proof"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "RFC 9162 consistency proof"
              }
            },
            "/api/v1/proofs/inclusion": {
              "get": {
                "parameters": [
                  {
                    "in": "query",
                    "name": "index",
                    "required": true,
                    "schema": {
                      "minimum": 0,
                      "type": "integer"
                    }
                  },
                  {
                    "in": "query",
                    "name": "tree_size",
                    "schema": {
                      "minimum": 1,
                      "type": "integer"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "properties": {
                            "index": {
                              "type": "integer"
                            },
                            "proof": {
                              "$ref": "#/components/schemas/ProofHashes"
                            },
                            "tree_size": {
                              "type": "integer"
                            }
                          },
                          "type": "object"
                        }
                      }
                    },
                    "description": "proof"
                  },
                  "400": {
                    "$ref": "#/components/responses/Error"
                  },
                  "404": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "summary": "RFC 9162 inclusion proof"
              }
            },
            "/api/v1/results": {
              "get": {
                "responses": {
                  "200": {
                    "content": {
                      "application/json": {
                        "schema": {
                          "items": {
                            "$ref": "#/components/schemas/Place"
                          },
                          "type": "array"
                        }
                      }
                    },
                    "description": "ended places"
                  }
                },
                "summary": "Ended places with their results"
              }
            },
            "/metrics": {
              "get": {
                "description": "What an operator watches, in Prometheus' text format (0.0.4), for this server process: vote_votes_accepted_total (votes the vote routes, POST /api/v1/places/{place}/votes, an anonymous place's POST /api/v1/places/{place}/ballots and BVC's /setVote, answered as recorded) and vote_votes_refused_total{reason} (votes they refused, by the answer's error code: already_voted, token_not_authorized, voting_closed, overloaded, rate_limited, …; the two add up to every answer of the vote routes); vote_block_commit_seconds (histogram: from the writer starting a block to the block being durable) and vote_block_events (histogram: events per durable block); vote_writer_queued (gauge: commands waiting for the next block, when scraped); vote_blocks_taken_in_total (blocks other servers on the same database appended that this one took in). Behind the admin token; vote serve --metrics-listen HOST:PORT serves it without the token on a second address.",
                "responses": {
                  "200": {
                    "content": {
                      "text/plain": {
                        "schema": {
                          "type": "string"
                        }
                      }
                    },
                    "description": "the metrics"
                  },
                  "401": {
                    "$ref": "#/components/responses/Error"
                  },
                  "403": {
                    "$ref": "#/components/responses/Error"
                  },
                  "429": {
                    "$ref": "#/components/responses/Error"
                  }
                },
                "security": [
                  {
                    "admin": []
                  }
                ],
                "summary": "The server's metrics (Prometheus)"
              }
            }
          }
        }
        """#
}
