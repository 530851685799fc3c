#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# pvh-kernel.sh VMLINUZ VMLINUX: unpack the kernel image VMLINUZ (a bzImage
# with an xz, gzip or zstd payload) into the ELF file VMLINUX, which qemu boots
# directly through the kernel's PVH entry point. Under TCG, Debian's kernel
# spent about 3 of its 5 s from qemu start to a shell decompressing itself;
# a test boots one or two VMs, so this is about 3 s per test.
#
# Exits 0 with VMLINUX written (atomically, so parallel callers are safe),
# or 1 if the image cannot be unpacked or has no PVH entry: the caller then
# boots VMLINUZ as before.
set -u
in=$1 out=$2
tmp=$(mktemp "$out.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT
/usr/bin/python3 - "$in" "$tmp" <<'EOF' || exit 1
import gzip, lzma, struct, subprocess, sys, zlib

data = open(sys.argv[1], 'rb').read()
elf = None
# A zstd payload (Debian's 6.12) is cut out exactly, by the boot header's
# payload_offset and payload_length, minus the 4-byte size the kernel
# build appends; Python has no zstd module, so the zstd tool unpacks it.
if data[0x202:0x206] == b'HdrS':
    pm = ((data[0x1f1] or 4) + 1) * 512
    off, ln = struct.unpack_from('<II', data, 0x248)
    payload = data[pm + off:pm + off + ln]
    if payload[:4] == b'\x28\xb5\x2f\xfd' and len(payload) > 4:
        try:
            r = subprocess.run(['zstd', '-dcq', '--memory=2048MB'],
                               input=payload[:-4], capture_output=True)
            if r.returncode == 0 and r.stdout[:4] == b'\x7fELF':
                elf = r.stdout
        except OSError:
            pass
for magic in (b'\xfd7zXZ\x00', b'\x1f\x8b\x08'):
    at = data.find(magic)
    while at >= 0 and elf is None:
        try:
            if magic[0] == 0xfd:
                d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
            else:
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out = d.decompress(data[at:])
            # A stream cut short would boot into garbage: whole ones only.
            if d.eof and out[:4] == b'\x7fELF':
                elf = out
        except (lzma.LZMAError, zlib.error):
            pass
        at = data.find(magic, at + 1)
    if elf:
        break
if elf is None:
    sys.exit(1)
open(sys.argv[2], 'wb').write(elf)
EOF
# qemu boots an ELF kernel only through XEN_ELFNOTE_PHYS32_ENTRY (18).
readelf -n "$tmp" 2>/dev/null | grep -q 'Xen .*(0x00000012)' || exit 1
chmod 644 "$tmp" && mv "$tmp" "$out"
