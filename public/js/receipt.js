// The printable proof-of-delivery receipt for one delivery: receipt.html?reference=TRK-1.
import { blob, deliveryPath, json } from './api.js';
import { showAttempts } from './attempts.js';
import { currentSession } from './session.js';
import {
  byId, deviceTimeNode, fillDetails, flagsNode, formatDistance, formatLocation, localTime, mono, setStatus, showBlob, timeNode,
} from './ui.js';

async function load() {
  const status = byId('receipt-status');
  const reference = new URLSearchParams(location.search).get('reference') ?? '';
  byId('receipt-reference').textContent = reference;
  if (!currentSession()) {
    setStatus(status, 'Sign in on the console first (the key is kept per browser tab), then open the receipt from a delivery.', 'error');
    return;
  }
  if (!reference) {
    setStatus(status, 'No delivery reference given (receipt.html?reference=…).', 'error');
    return;
  }
  try {
    const delivery = await json(deliveryPath(reference));
    if (!delivery.proof) {
      setStatus(status, `Delivery ${reference} has no proof yet.`, 'error');
      return;
    }
    const [proof, png] = await Promise.all([json(`${deliveryPath(reference)}/proof`), blob(`${deliveryPath(reference)}/proof/signature.png`)]);
    document.title = `Proof of delivery ${delivery.reference} · Countersign`;
    fillDetails(byId('receipt-delivery'), [
      ['Recipient', delivery.recipient.name],
      ['Address', delivery.address],
      ['Destination', delivery.destination ? `${delivery.destination.lat.toFixed(6)}, ${delivery.destination.lon.toFixed(6)}` : null],
      ['Delivered at', timeNode(delivery.delivered_at)],
    ]);
    const distance = formatDistance(proof.distance_to_destination_m);
    fillDetails(byId('receipt-proof'), [
      ['Signed by', proof.signer.name],
      ['Signed at (device clock)', deviceTimeNode(proof.captured_at_as_sent ?? proof.captured_at)],
      ['Received at (server)', timeNode(proof.received_at)],
      ['Location', formatLocation(proof.location)],
      ['Distance to destination', distance && `${distance} (geofence ${proof.geofence_radius_m} m)`],
      ['Flags', flagsNode(proof.flags)],
      ['Collected by', `${proof.uploaded_by.name} (${proof.uploaded_by.role})`],
    ]);
    showAttempts(byId('receipt-attempts'), byId('receipt-attempts-list'), delivery.attempts);
    fillDetails(byId('receipt-digests'), [
      ['Original points', mono(proof.points_sha256)],
      ['Signature PNG', mono(proof.png_sha256)],
      ['Proof id', mono(proof.proof_id)],
    ]);
    const image = byId('receipt-signature');
    await new Promise((resolve) => {
      image.addEventListener('load', resolve, { once: true });
      image.addEventListener('error', resolve, { once: true });
      showBlob(image, png.blob);
    });
    byId('receipt-signer').textContent = `Signature of ${proof.signer.name}`;
    byId('receipt-footer').textContent = `Printed ${localTime(new Date())} from the Countersign console. ` +
      `Render algorithm ${proof.algorithm_version}.`;
    byId('receipt-body').hidden = false;
    byId('receipt-print').disabled = false;
    setStatus(status, '');
    document.body.dataset.ready = 'true';
  } catch (error) {
    setStatus(status, error.message, 'error');
  }
}

byId('receipt-print').addEventListener('click', () => window.print());
load();
