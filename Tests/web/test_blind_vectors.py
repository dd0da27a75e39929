"""The browser's RSA blind signatures (Sources/VoteServer/Web/blind.js, in headless Chromium) against the RFC 9474
vectors of all four variants, with the vectors' randomness fixed (prefix, salt, blinding inverse) and every
intermediate value compared; then the protocol with fresh randomness against a signer and a verifier written
here with Python's integers and `cryptography`, and what the browser must refuse."""

import json
import os
import unittest

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from support import REPO, WEB, chromium, static_server

VECTORS = os.path.join(REPO, "Tests", "BlindRSATests", "Vectors", "rfc9474", "rfc9474.json")

# Runs in the page: arguments are hex strings; results come back as hex (or an error's message).
PRELUDE = """
const done = arguments[arguments.length - 1];
const fromHex = (h) => Uint8Array.from(h.match(/../g) ?? [], (x) => parseInt(x, 16));
const toHex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const run = (body) => import('/blind.js').then(body)
    .then(done, (error) => done({error: String(error.message ?? error)}));
"""

VECTOR = PRELUDE + """
const [v, spki] = arguments;
run(async (blind) => {
    const key = await blind.importPublicKey(fromHex(spki), v.name);
    const prepared = blind.prepare(key, fromHex(v.msg), {prefix: fromHex(v.msg_prefix)});
    const blinding = await blind.blind(key, prepared, {salt: fromHex(v.salt), inverse: fromHex(v.inv)});
    const sig = await blind.finalize(key, blinding, fromHex(v.blind_sig));
    return {
        n: key.n.toString(16), e: key.e.toString(16), bits: key.bits,
        prepared: toHex(prepared), encoded: toHex(blinding.encodedMessage),
        blinded: toHex(blinding.blindedMessage), inverse: toHex(blinding.inverse), sig: toHex(sig),
        verified: await blind.verify(key, fromHex(v.prepared_msg), fromHex(v.sig)),
    };
});
"""

BLIND = PRELUDE + """
const [spki, variant, message] = arguments;
run(async (blind) => {
    const key = await blind.importPublicKey(fromHex(spki), variant);
    window.blindingKey = key;
    window.blinding = await blind.blind(key, blind.prepare(key, fromHex(message)));
    return {prepared: toHex(window.blinding.preparedMessage), blinded: toHex(window.blinding.blindedMessage)};
});
"""

FINALIZE = PRELUDE + """
const [blindSignature] = arguments;
run(async (blind) => {
    const sig = await blind.finalize(window.blindingKey, window.blinding, fromHex(blindSignature));
    return {sig: toHex(sig)};
});
"""

VERIFY = PRELUDE + """
const [spki, variant, prepared, sig] = arguments;
run(async (blind) => {
    const key = await blind.importPublicKey(fromHex(spki), variant);
    return {verified: await blind.verify(key, fromHex(prepared), fromHex(sig))};
});
"""


def spki(public_key):
    return public_key.public_bytes(serialization.Encoding.DER,
                                   serialization.PublicFormat.SubjectPublicKeyInfo).hex()


def flip(hex_bytes, index):
    data = bytearray.fromhex(hex_bytes)
    data[index] ^= 0x01
    return data.hex()


class BlindVectorTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(VECTORS) as file:
            cls.vectors = json.load(file)
        first = cls.vectors[0]
        cls.n, cls.e, cls.d = (int(first[name], 16) for name in ("n", "e", "d"))
        cls.spki = spki(rsa.RSAPublicNumbers(cls.e, cls.n).public_key())
        cls.driver = chromium()
        cls.server = static_server(WEB)
        cls.base = cls.server.__enter__()
        cls.driver.get(cls.base + "/")

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.__exit__(None, None, None)

    def page(self, script, *arguments):
        result = self.driver.execute_async_script(script, *arguments)
        self.assertNotIn("error", result, result.get("error"))
        return result

    def refused(self, script, *arguments):
        result = self.driver.execute_async_script(script, *arguments)
        self.assertIn("error", result, result)
        return result["error"]

    def test_every_intermediate_value_of_the_four_variants(self):
        self.assertEqual([v["name"] for v in self.vectors],
                         ["RSABSSA-SHA384-PSS-Randomized", "RSABSSA-SHA384-PSSZERO-Randomized",
                          "RSABSSA-SHA384-PSS-Deterministic", "RSABSSA-SHA384-PSSZERO-Deterministic"])
        for vector in self.vectors:
            with self.subTest(vector["name"]):
                self.assertEqual(vector["n"], self.vectors[0]["n"])  # one key for all four
                result = self.page(VECTOR, vector, self.spki)
                self.assertEqual(int(result["n"], 16), int(vector["n"], 16))
                self.assertEqual(int(result["e"], 16), int(vector["e"], 16))
                self.assertEqual(result["bits"], 4096)
                self.assertEqual(result["prepared"], vector["prepared_msg"])
                if "encoded_msg" in vector:  # the first object of the file has none
                    self.assertEqual(result["encoded"], vector["encoded_msg"])
                else:
                    # sig^e mod n is the encoded message: the browser's must be that one.
                    expected = pow(int(vector["sig"], 16), self.e, self.n)
                    self.assertEqual(int(result["encoded"], 16), expected)
                self.assertEqual(result["blinded"], vector["blinded_msg"])
                self.assertEqual(result["inverse"], vector["inv"])
                self.assertEqual(result["sig"], vector["sig"])
                self.assertTrue(result["verified"])

    def test_fresh_randomness_against_an_independent_signer_and_verifier(self):
        for vector in self.vectors:
            with self.subTest(vector["name"]):
                variant, message = vector["name"], vector["msg"]
                first = self.page(BLIND, self.spki, variant, message)
                second = self.page(BLIND, self.spki, variant, message)
                self.assertNotEqual(first["blinded"], second["blinded"])  # a fresh blinding factor each time
                prefix = 32 if variant.endswith("Randomized") else 0
                self.assertEqual(len(second["prepared"]) // 2, prefix + len(message) // 2)
                self.assertTrue(second["prepared"].endswith(message))
                # BlindSign: z^d mod n, the signer's whole job, done here with Python's integers.
                blind_signature = pow(int(second["blinded"], 16), self.d, self.n).to_bytes(512, "big").hex()
                sig = self.page(FINALIZE, blind_signature)["sig"]
                salt = 48 if "-PSS-" in variant else 0
                rsa.RSAPublicNumbers(self.e, self.n).public_key().verify(
                    bytes.fromhex(sig), bytes.fromhex(second["prepared"]),
                    padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=salt), hashes.SHA384())
                if salt == 0 and prefix == 0:
                    self.assertEqual(sig, vector["sig"])  # without salt or prefix, one signature per message

    def test_what_the_browser_refuses(self):
        vector = self.vectors[0]
        variant, prepared, sig = vector["name"], vector["prepared_msg"], vector["sig"]
        verify = lambda key, message, signature: self.page(VERIFY, key, variant, message, signature)["verified"]
        self.assertTrue(verify(self.spki, prepared, sig))
        for index in (0, 255, 511):
            self.assertFalse(verify(self.spki, prepared, flip(sig, index)))
        self.assertFalse(verify(self.spki, flip(prepared, 0), sig))  # the prefix
        self.assertFalse(verify(self.spki, flip(prepared, 79), sig))  # the message
        self.assertFalse(verify(self.spki, prepared[64:], sig))  # the message without its prefix
        self.assertFalse(verify(self.spki, prepared, sig[:-2]))
        self.assertFalse(verify(self.spki, prepared, ""))
        # The same signature checked under the PSSZERO variant (another salt length) fails.
        self.assertFalse(self.page(VERIFY, self.spki, "RSABSSA-SHA384-PSSZERO-Randomized", prepared, sig)["verified"])
        # A signature under another key.
        other = rsa.generate_private_key(public_exponent=65537, key_size=3072)
        other_sig = other.sign(bytes.fromhex(prepared), padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=48),
                               hashes.SHA384()).hex()
        self.assertTrue(verify(spki(other.public_key()), prepared, other_sig))
        self.assertFalse(verify(self.spki, prepared, other_sig))
        # Finalize refuses a blind signature that is not the signer's answer: flipped, or for another message.
        blinded = self.page(BLIND, self.spki, variant, b"credential".hex())["blinded"]
        good = pow(int(blinded, 16), self.d, self.n).to_bytes(512, "big").hex()
        wrong = "the blind signature does not give a valid signature under this key"
        self.assertIn(wrong, self.refused(FINALIZE, flip(good, 100)))
        self.assertIn(wrong, self.refused(FINALIZE, vector["blind_sig"]))
        self.assertIn("must be 512 bytes", self.refused(FINALIZE, good[:-2]))
        self.assertTrue(self.page(FINALIZE, good)["sig"])
        # Keys it refuses: under 3072 bits, not a key, an unknown variant.
        small = spki(rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key())
        self.assertIn("at least 3072 bits, not 2048", self.refused(VERIFY, small, variant, prepared, sig))
        self.assertIn("not a DER RSA public key", self.refused(VERIFY, "3003020101", variant, prepared, sig))
        self.assertIn("unknown RFC 9474 variant", self.refused(VERIFY, self.spki, "RSABSSA-SHA256", prepared, sig))


if __name__ == "__main__":
    unittest.main()
