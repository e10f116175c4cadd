package outbound

import (
	"fmt"
	"net/netip"
)

// Class is what kind of network an IP address belongs to, as far as
// server-side request forgery is concerned.
type Class int

// The address classes. Only Public is reachable by default.
const (
	Public Class = iota
	// Loopback is 127/8 and ::1: the server itself.
	Loopback
	// Private is RFC 1918 (10/8, 172.16/12, 192.168/16), unique local
	// fc00::/7, deprecated site-local fec0::/10, CGNAT shared space
	// 100.64/10, benchmarking 198.18/15 and NAT64 local-use 64:ff9b:1::/48:
	// networks behind the operator's edge.
	Private
	// LinkLocal is 169.254/16 (cloud metadata services live there) and
	// fe80::/10.
	LinkLocal
	// Unspecified is 0.0.0.0, 0/8 and ::; dialing them reaches the local host.
	Unspecified
	// Multicast is 224/4, ff00::/8 and the limited broadcast address.
	Multicast
	// Reserved is everything that must never be a server: documentation
	// ranges, 240/4, IETF protocol assignments 192.0.0/24, discard-only
	// 100::/64, Teredo, deprecated IPv4-compatible IPv6 and invalid input.
	Reserved
)

var classNames = [...]string{
	Public:      "public",
	Loopback:    "loopback",
	Private:     "private",
	LinkLocal:   "link-local",
	Unspecified: "unspecified",
	Multicast:   "multicast",
	Reserved:    "reserved",
}

// String names the class.
func (c Class) String() string {
	if c >= 0 && int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

type prefixClass struct {
	p netip.Prefix
	c Class
}

// v4Classes is checked in order; the first match wins.
var v4Classes = []prefixClass{
	{netip.MustParsePrefix("0.0.0.0/8"), Unspecified},
	{netip.MustParsePrefix("10.0.0.0/8"), Private},
	{netip.MustParsePrefix("100.64.0.0/10"), Private},
	{netip.MustParsePrefix("127.0.0.0/8"), Loopback},
	{netip.MustParsePrefix("169.254.0.0/16"), LinkLocal},
	{netip.MustParsePrefix("172.16.0.0/12"), Private},
	{netip.MustParsePrefix("192.0.0.0/24"), Reserved},
	{netip.MustParsePrefix("192.0.2.0/24"), Reserved},
	{netip.MustParsePrefix("192.88.99.0/24"), Reserved}, // 6to4 relay anycast, deprecated
	{netip.MustParsePrefix("192.168.0.0/16"), Private},
	{netip.MustParsePrefix("198.18.0.0/15"), Private},
	{netip.MustParsePrefix("198.51.100.0/24"), Reserved},
	{netip.MustParsePrefix("203.0.113.0/24"), Reserved},
	{netip.MustParsePrefix("224.0.0.0/4"), Multicast},
	{netip.MustParsePrefix("255.255.255.255/32"), Multicast},
	{netip.MustParsePrefix("240.0.0.0/4"), Reserved},
}

var v6Classes = []prefixClass{
	{netip.MustParsePrefix("::/128"), Unspecified},
	{netip.MustParsePrefix("::1/128"), Loopback},
	{netip.MustParsePrefix("::/96"), Reserved},           // IPv4-compatible, deprecated
	{netip.MustParsePrefix("::ffff:0:0:0/96"), Reserved}, // IPv4-translated (SIIT)
	{netip.MustParsePrefix("64:ff9b:1::/48"), Private},
	{netip.MustParsePrefix("100::/64"), Reserved},
	{netip.MustParsePrefix("2001::/32"), Reserved}, // Teredo hides an IPv4 address
	{netip.MustParsePrefix("2001:db8::/32"), Reserved},
	{netip.MustParsePrefix("3fff::/20"), Reserved}, // documentation (RFC 9637)
	{netip.MustParsePrefix("fc00::/7"), Private},
	{netip.MustParsePrefix("fe80::/10"), LinkLocal},
	{netip.MustParsePrefix("fec0::/10"), Private},
	{netip.MustParsePrefix("ff00::/8"), Multicast},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Classify returns the class of ip. IPv6 forms that carry an IPv4 address
// (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) have the
// class of the IPv4 address they lead to, so that ::ffff:127.0.0.1 is
// loopback. An invalid or zoned address is Reserved.
func Classify(ip netip.Addr) Class {
	if !ip.IsValid() {
		return Reserved
	}
	if ip.Zone() != "" {
		// A zone only makes sense for link-local targets; refusing zoned
		// addresses outright keeps interface selection out of users' hands.
		return Reserved
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return classify(v4Classes, ip)
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return Classify(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(ip):
		return Classify(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return classify(v6Classes, ip)
}

func classify(table []prefixClass, ip netip.Addr) Class {
	for _, pc := range table {
		if pc.p.Contains(ip) {
			return pc.c
		}
	}
	return Public
}

// Allowed reports whether the client may connect to ip under c.
func (c Config) Allowed(ip netip.Addr) bool { return c.Check(ip) == nil }

// Check returns nil when the client may connect to ip under c, or an error
// wrapping ErrForbiddenAddress that names the address and its class.
// Unspecified, multicast and reserved addresses are never allowed: they
// are not servers.
func (c Config) Check(ip netip.Addr) error {
	cl := Classify(ip)
	switch cl {
	case Public:
		return nil
	case Loopback:
		if c.AllowLoopback {
			return nil
		}
	case Private:
		if c.AllowPrivate {
			return nil
		}
	case LinkLocal:
		if c.AllowLinkLocal {
			return nil
		}
	}
	return &AddressError{Addr: ip, Class: cl}
}

// AddressError is the refusal of an address; it matches
// ErrForbiddenAddress with errors.Is.
type AddressError struct {
	Addr  netip.Addr
	Class Class
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("outbound: refusing to connect to %s address %s", e.Class, e.Addr)
}

// Is makes errors.Is(err, ErrForbiddenAddress) true.
func (e *AddressError) Is(target error) bool { return target == ErrForbiddenAddress }
