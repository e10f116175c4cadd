package outbound

import (
	"net"
	"net/netip"
	"testing"
)

// FuzzAllowed checks the classification against independent facts: the
// standard library's own predicates, the IPv4-mapped form of every IPv4
// address, and the config switches only ever widening what is allowed.
func FuzzAllowed(f *testing.F) {
	for _, s := range []string{
		"8.8.8.8", "127.0.0.1", "::1", "::ffff:127.0.0.1", "10.1.2.3", "172.20.0.1",
		"192.168.1.1", "169.254.169.254", "fe80::1", "fc00::1", "100.64.0.1", "0.0.0.0",
		"::", "224.0.0.1", "ff02::1", "64:ff9b::7f00:1", "2002:a00:1::", "2001:db8::1",
		"fe80::1%eth0", "::ffff:0:a00:1", "255.255.255.255",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return
		}
		def := Config{}
		all := Config{AllowLoopback: true, AllowPrivate: true, AllowLinkLocal: true}
		cl := Classify(ip)
		if def.Allowed(ip) != (cl == Public) {
			t.Fatalf("%s: class %s, default allowed %v", ip, cl, def.Allowed(ip))
		}
		if def.Allowed(ip) && !all.Allowed(ip) {
			t.Fatalf("%s: allowed by default but not when everything is allowed", ip)
		}
		std := net.IP(ip.AsSlice())
		if def.Allowed(ip) && (std.IsLoopback() || std.IsPrivate() || std.IsLinkLocalUnicast() ||
			std.IsLinkLocalMulticast() || std.IsInterfaceLocalMulticast() || std.IsMulticast() ||
			std.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() || ip.IsMulticast() ||
			ip.IsUnspecified() || ip.IsLinkLocalUnicast()) {
			t.Fatalf("%s allowed by default though the standard library calls it special", ip)
		}
		if std.IsMulticast() || std.IsUnspecified() {
			if all.Allowed(ip) {
				t.Fatalf("%s: multicast or unspecified allowed", ip)
			}
		}
		if ip.Zone() != "" && all.Allowed(ip) {
			t.Fatalf("zoned %s allowed", ip)
		}
		if ip.Is4() {
			mapped := netip.AddrFrom16(ip.As16())
			if Classify(mapped) != cl {
				t.Fatalf("%s is %s but %s is %s", ip, cl, mapped, Classify(mapped))
			}
		}
		if ip.Zone() == "" && ip.Unmap().Is4() && Classify(ip) != Classify(ip.Unmap()) {
			t.Fatalf("mapped %s differs from %s", ip, ip.Unmap())
		}
		if err := def.Check(ip); (err == nil) != def.Allowed(ip) {
			t.Fatalf("Check and Allowed disagree on %s", ip)
		}
	})
}
