"""Addresses to print for the GM: this machine's LAN address, so phones on the same Wi-Fi can join."""

from __future__ import annotations

import ipaddress
import socket
import subprocess


def lan_addresses() -> list[str]:
    """Non-loopback IPv4 addresses of this machine, found without sending any packet."""
    found: list[str] = []
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(str(info[4][0]))
    except OSError:
        pass
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=3).stdout
        found.extend(out.split())
    except (OSError, subprocess.SubprocessError):
        pass
    result = []
    for address in found:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            continue
        if ip.version == 4 and not ip.is_loopback and not ip.is_link_local and address not in result:
            result.append(address)
    return result
