"""Signed manifests: an Ed25519 signature with a key kept on the workstation (docs/security.md).

The first export makes the workstation's key pair in the user's settings folder: the private key
``release-signing-key.pem`` (PKCS #8, readable by the user alone, mode 0600) and its public half
``release-signing-key.pub`` (PEM) to hand to whoever receives the releases. Every manifest then
carries ``signed_by`` (the algorithm, the raw public key and its fingerprint) and ``signature``:
the signature of the manifest's canonical JSON (sorted keys, no spaces, every field but
``signature`` itself), so any edit of any field (``k`` lowered to 1, a quasi-identifier taken out,
a file's SHA-256) makes it fail. ``veil verify`` checks it and says whose key signed: this
workstation's, the one given with ``--public-key``, or another.

A signature proves who made a manifest, not that the release is private: ``veil verify`` still
re-checks the privacy model on the file. It is also what lets an export tell the files of an
earlier export it made itself from files that someone else listed in a manifest planted in the
folder (:func:`made_here`).

Where: ``$VEIL_SETTINGS_DIR`` when set, otherwise ``%APPDATA%\\Veil`` on Windows and
``$XDG_CONFIG_HOME/Veil`` or ``~/.config/Veil`` elsewhere (beside the desktop's settings).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import BadInput
from ..base.io import check_output_file, file_kind, open_regular

ALGORITHM = "Ed25519"
PRIVATE_NAME = "release-signing-key.pem"
PUBLIC_NAME = "release-signing-key.pub"
MAX_KEY_BYTES = 16_384


def settings_dir() -> Path:
    """The user's settings folder (not created here)."""
    chosen = os.environ.get("VEIL_SETTINGS_DIR")
    if chosen:
        return Path(chosen).expanduser()
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "Veil"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "Veil"


def fingerprint(raw: bytes) -> str:
    """``SHA256:`` and the unpadded base64 of the raw public key's SHA-256 (as OpenSSH shows keys)."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(raw).digest()).decode().rstrip("=")


READ_KEYS = ("_dir",)  # what reading a manifest adds (never in the file: read_manifest refuses it there)


def canonical(manifest: dict) -> bytes:
    """The bytes a signature covers: every field but ``signature`` (and what reading added), so a
    field added after signing, whatever its name, makes the signature fail."""
    body = {k: v for k, v in manifest.items() if k != "signature" and k not in READ_KEYS}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")


@dataclass(frozen=True)
class PublicKey:
    raw: bytes

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.raw)

    def verifies(self, signature: bytes, data: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(signature, data)
        except (InvalidSignature, ValueError):
            return False
        return True


def _raw_public(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _read_key_file(path: Path, what: str, follow_symlinks: bool = True) -> bytes:
    try:
        with open_regular(path, follow_symlinks=follow_symlinks) as f:  # never a FIFO or a device
            data = f.read(MAX_KEY_BYTES + 1)
    except OSError as exc:
        raise BadInput(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_KEY_BYTES:
        raise BadInput(f"{path} is not a {what}: it is larger than {MAX_KEY_BYTES:,} bytes")
    return data


def _settings_folder(create: bool) -> Path | None:
    """The settings folder, checked: a folder of the user's that no one else may write to (made,
    mode 0700, when ``create``); None when it does not exist and ``create`` is false."""
    folder = settings_dir()
    if not os.path.lexists(folder):
        if not create:
            return None
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise BadInput(f"cannot make the settings folder {folder}: {exc.strerror or exc}") from None
    try:
        st = os.stat(folder)
    except OSError as exc:
        raise BadInput(f"the settings folder {folder} cannot be used: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise BadInput(
            f"the settings folder {folder} is {file_kind(st.st_mode)}, not a folder; Veil keeps its signing key there"
        )
    if hasattr(os, "geteuid") and (st.st_uid != os.geteuid() or st.st_mode & 0o022):
        raise BadInput(
            f"the settings folder {folder} may be written by other users (mode {stat.filemode(st.st_mode)}, "
            f"owner uid {st.st_uid}): they could swap the signing key or plant a link there; make it yours "
            f"alone with chmod 700"
        )
    return folder


def _pem_public(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def _write_public(folder: Path, key) -> None:
    """Write the public half beside the private key: through a new temporary file (``O_EXCL``, never
    through a link), renamed onto ``release-signing-key.pub`` only when that is absent or a regular file."""
    target = folder / PUBLIC_NAME
    check_output_file(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{PUBLIC_NAME}.", suffix=".part", dir=folder)  # O_EXCL|O_NOFOLLOW
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_pem_public(key))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        check_output_file(target)
        os.replace(tmp, target)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def _check_public(folder: Path, key) -> None:
    """The public key handed to recipients must be the private key's own half: made again when it was
    deleted, refused when it is another key (recipients would reject this workstation's releases and
    accept whatever the other key signs)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    path = folder / PUBLIC_NAME
    if not os.path.lexists(path):
        _write_public(folder, key)
        return
    data = _read_key_file(path, "public key", follow_symlinks=False)
    try:
        public = serialization.load_pem_public_key(data)
        matches = _raw_public(public) == _raw_public(key.public_key())
    except (ValueError, TypeError, UnsupportedAlgorithm):
        matches = False
    if not matches:
        raise BadInput(
            f"the public key {path} is not the half of the signing key {folder / PRIVATE_NAME}: recipients "
            f"checking with it would reject this workstation's releases; remove it (it is made again from the "
            f"signing key on the next export)"
        )


def _private_key(create: bool):
    """The workstation's private key; made (with its public half) on first use when ``create``, and
    then its public half checked (made again when deleted). None when there is none and ``create``
    is false."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    folder = _settings_folder(create)
    if folder is None:
        return None
    path = folder / PRIVATE_NAME
    if not os.path.lexists(path):
        if not create:
            return None
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:  # another export made it meanwhile: use that one
            return _private_key(create=create)
        except OSError as exc:
            raise BadInput(f"cannot make the signing key {path}: {exc.strerror or exc}") from None
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
        _write_public(folder, key)
        return key
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(
            f"the signing key {path} is not a regular file; remove it (a new key is made on the next export)"
        )
    if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o077):
        raise BadInput(
            f"the signing key {path} may be read or changed by other users (mode "
            f"{stat.filemode(st.st_mode)}); make it yours alone with chmod 600"
        )
    try:
        key = serialization.load_pem_private_key(
            _read_key_file(path, "signing key", follow_symlinks=False), password=None
        )
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise BadInput(
            f"the signing key {path} is damaged; move it away (a new key is made on the next export, "
            f"and releases signed with the old one no longer say 'this workstation')"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise BadInput(f"the signing key {path} is not an {ALGORITHM} key")
    if create:
        _check_public(folder, key)
    return key


def workstation_key() -> PublicKey | None:
    """This workstation's public key, or None when no export has made one yet."""
    key = _private_key(create=False)
    return None if key is None else PublicKey(_raw_public(key.public_key()))


def signer() -> dict:
    """The ``signed_by`` field of a manifest this workstation signs (making the key on first use)."""
    raw = _raw_public(_private_key(create=True).public_key())
    return {"algorithm": ALGORITHM, "public_key": base64.b64encode(raw).decode(), "fingerprint": fingerprint(raw)}


def sign(manifest: dict) -> None:
    """Set ``manifest["signature"]`` over everything else in it (``signed_by`` included)."""
    key = _private_key(create=True)
    if (manifest.get("signed_by") or {}).get("public_key") != base64.b64encode(_raw_public(key.public_key())).decode():
        manifest["signed_by"] = signer()
    manifest["signature"] = base64.b64encode(key.sign(canonical(manifest))).decode()


def read_public_key(path: str | os.PathLike) -> PublicKey:
    """A public key file: PEM (``release-signing-key.pub``) or the base64 of the raw 32 bytes."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data = _read_key_file(Path(path), "public key")
    try:
        if b"-----BEGIN" in data:
            key = serialization.load_pem_public_key(data)
            if not isinstance(key, Ed25519PublicKey):
                raise BadInput(f"{path} is not an {ALGORITHM} public key")
            return PublicKey(_raw_public(key))
        raw = base64.b64decode(data.strip(), validate=True)
    except (ValueError, TypeError, UnicodeDecodeError):
        raise BadInput(f"{path} is not an {ALGORITHM} public key (PEM or the base64 of 32 bytes)") from None
    if len(raw) != 32:
        raise BadInput(f"{path} is not an {ALGORITHM} public key (PEM or the base64 of 32 bytes)")
    return PublicKey(raw)


@dataclass(frozen=True)
class Signature:
    """What a manifest's signature says: ``state`` is "unsigned", "invalid" (edited after signing,
    or not a signature) or "valid"; ``key`` the key it names."""

    state: str
    key: PublicKey | None = None
    why: str = ""


def check(manifest: dict) -> Signature:
    """Whether the manifest's signature is one its own ``signed_by`` key made over its content."""
    if "signature" not in manifest and "signed_by" not in manifest:
        return Signature("unsigned")
    signed_by, value = manifest.get("signed_by"), manifest.get("signature")
    if not isinstance(signed_by, dict) or not isinstance(value, str) or signed_by.get("algorithm") != ALGORITHM:
        return Signature("invalid", why="its signature fields are not an Ed25519 signature Veil writes")
    try:
        raw = base64.b64decode(str(signed_by.get("public_key")), validate=True)
        sig = base64.b64decode(value, validate=True)
        data = canonical(manifest)
    except (ValueError, TypeError):
        return Signature("invalid", why="its signature fields are not an Ed25519 signature Veil writes")
    if len(raw) != 32:
        return Signature("invalid", why="its public key is not an Ed25519 key")
    key = PublicKey(raw)
    if not key.verifies(sig, data):
        return Signature(
            "invalid", key, "the manifest was changed after it was signed: its signature does not match its content"
        )
    return Signature("valid", key)


def made_here(manifest: dict) -> bool:
    """True when this workstation's key signed the manifest, unchanged since: its files are ones an
    export made here, which a later export into the same folder may replace."""
    result = check(manifest)
    if result.state != "valid":
        return False
    try:
        mine = workstation_key()
    except BadInput:
        return False
    return mine is not None and mine.raw == result.key.raw
