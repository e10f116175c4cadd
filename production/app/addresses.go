package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production"
)

// webhookLookupTimeout bounds the name lookup of a webhook URL when it is
// saved.
const webhookLookupTimeout = 3 * time.Second

// checkWebhookChange checks p's webhook URL against the address guard of
// outgoing requests when it is new or changed, as input URLs are checked
// when they are fetched: a webhook to a private or loopback address is a
// form error when saved, not a failed delivery later. A name that does
// not resolve now is accepted; the sender checks every address it dials.
func (a *App) checkWebhookChange(ctx context.Context, before, p *production.Production) error {
	if p.Webhook == nil || *p.Webhook == "" || (before.Webhook != nil && *before.Webhook == *p.Webhook) {
		return nil
	}
	u, err := url.Parse(*p.Webhook)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fieldError("webhook", "must be an absolute http or https URL")
	}
	if a.policy == nil {
		return nil
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
	for _, ad := range addrs {
		if err := a.policy(ad.Unmap()); err != nil {
			return fieldError("webhook", "points to a private, loopback or otherwise forbidden address ("+ad.Unmap().String()+")")
		}
	}
	return nil
}

// checkLiveURL is the default check of the addresses a live stream
// would reach: every address its host resolves to must pass the address
// policy. ffmpeg connects by itself, so the check is made when the
// stream is stored.
func (a *App) checkLiveURL(ctx context.Context, raw string) error {
	if a.policy == nil {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if ad, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ad}
	} else if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
		return fmt.Errorf("cannot resolve %s", host)
	}
	for _, ad := range addrs {
		if err := a.policy(ad); err != nil {
			return errors.New("this server does not connect to " + ad.String() + ": " + err.Error())
		}
	}
	return nil
}
