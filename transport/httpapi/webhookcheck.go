package httpapi

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/transport/outbound"
)

// webhookLookupTimeout bounds the name lookup of a webhook URL when it is
// saved.
const webhookLookupTimeout = 3 * time.Second

// checkWebhookChange checks p's webhook URL against the address guard of
// outgoing requests when it is new or changed, as input URLs are checked
// when they are fetched: a webhook to a private or loopback address is a
// form error when saved, not a failed delivery later. A name that does
// not resolve now is accepted; the sender checks every address it dials.
func (s *server) checkWebhookChange(ctx context.Context, before, p *production.Production) error {
	if p.Webhook == nil || *p.Webhook == "" || (before.Webhook != nil && *before.Webhook == *p.Webhook) {
		return nil
	}
	u, err := url.Parse(*p.Webhook)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fieldError("webhook", "must be an absolute http or https URL")
	}
	cfg := outbound.Config{}
	if c, ok := s.fetch.(interface{ Config() outbound.Config }); ok {
		cfg = c.Config()
	}
	host := strings.TrimSuffix(u.Hostname(), ".")
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		lctx, cancel := context.WithTimeout(ctx, webhookLookupTimeout)
		defer cancel()
		addrs, _ = net.DefaultResolver.LookupNetIP(lctx, "ip", host)
	}
	for _, a := range addrs {
		if err := cfg.Check(a.Unmap()); err != nil {
			return fieldError("webhook", "points to a private, loopback or otherwise forbidden address ("+a.Unmap().String()+")")
		}
	}
	return nil
}
