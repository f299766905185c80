"""A smoke run of a client generated from public/openapi.yaml against a live server.

Run by scripts/generated-client-smoke.sh with the generated package on PYTHONPATH and
SMOKE_BASE, SMOKE_DISPATCHER_KEY, SMOKE_COURIER_KEY set. Uses nothing but the generated client
for the API calls: if the document stops describing what the server does (an operation, a
schema, a required member), a step here fails.

    python generated_client_smoke.py public/openapi.yaml
"""
import hashlib
import json
import os
import sys
import uuid

import jsonschema
import yaml
from countersign_api_client import AuthenticatedClient
from countersign_api_client.api.deliveries import create_delivery, get_delivery, search_deliveries
from countersign_api_client.api.proofs import get_proof_metadata, get_proof_png, upload_proof
from countersign_api_client.api.session import get_session
from countersign_api_client.models import NewDelivery, SearchDeliveriesStatus, ProofMetadata, ProofReceipt, ProofUpload, Session

failures = []


def check(condition, message):
    print(("ok    " if condition else "FAIL  ") + message)
    if not condition:
        failures.append(message)


def examples_match_their_schemas(document):
    """Every example under components/examples that an operation uses for a JSON body or
    response, and every inline `example` of a JSON media type, validates against its schema."""
    def validator(schema):
        # "#/components/..." references resolve against the document's components placed beside the schema.
        return jsonschema.Draft202012Validator(
            {**schema, "components": document["components"]},
            format_checker=jsonschema.FormatChecker(),
        )

    count = 0
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            media = []
            body = operation.get("requestBody", {}).get("content", {})
            media += [(f"{method.upper()} {path} request", t, m) for t, m in body.items()]
            for status, response in operation["responses"].items():
                if "$ref" in response:
                    response = document["components"]["responses"][response["$ref"].split("/")[-1]]
                media += [(f"{method.upper()} {path} {status}", t, m) for t, m in response.get("content", {}).items()]
            for where, content_type, m in media:
                if "json" not in content_type or "schema" not in m:
                    continue
                values = []
                if "example" in m:
                    values.append(m["example"])
                for example in m.get("examples", {}).values():
                    if "$ref" in example:
                        example = document["components"]["examples"][example["$ref"].split("/")[-1]]
                    values.append(example["value"])
                for value in values:
                    errors = list(validator(m["schema"]).iter_errors(value))
                    check(not errors, f"example of {where} ({content_type}) matches its schema"
                          + (f": {errors[0].message} at {list(errors[0].absolute_path)}" if errors else ""))
                    count += 1
    check(count >= 15, f"{count} JSON examples checked")


def main():
    document = yaml.safe_load(open(sys.argv[1]))
    examples_match_their_schemas(document)

    base = os.environ["SMOKE_BASE"]
    dispatcher = AuthenticatedClient(base_url=base, token=os.environ["SMOKE_DISPATCHER_KEY"], raise_on_unexpected_status=True)
    courier = AuthenticatedClient(base_url=base, token=os.environ["SMOKE_COURIER_KEY"], raise_on_unexpected_status=True)

    raw = AuthenticatedClient(base_url=base, token=os.environ["SMOKE_DISPATCHER_KEY"])

    session = get_session.sync(client=dispatcher)
    check(isinstance(session, Session) and session.role.value == "dispatcher", "GET /v1/session gives a typed Session")

    delivery_example = document["paths"]["/v1/deliveries"]["post"]["requestBody"]["content"]["application/json"]["example"]
    upload_examples = document["paths"]["/v1/deliveries/{reference}/proof"]["post"]["requestBody"]["content"]["application/json"]["examples"]
    for name, ref in upload_examples.items():
        reference = f"SMOKE-{name}-{uuid.uuid4().hex[:8]}"
        created = create_delivery.sync_detailed(client=dispatcher, body=NewDelivery.from_dict(dict(delivery_example, reference=reference)))
        check(created.status_code == 201, f"createDelivery {reference}: {created.status_code}")

        upload = document["components"]["examples"][ref["$ref"].split("/")[-1]]["value"]
        key = str(uuid.uuid4())
        stored = upload_proof.sync_detailed(reference, client=courier, body=ProofUpload.from_dict(upload), idempotency_key=key)
        check(stored.status_code == 201 and isinstance(stored.parsed, ProofReceipt),
              f"uploadProof with the {name} example: {stored.status_code} {stored.content[:200]!r}")
        if stored.status_code != 201:
            continue
        again = upload_proof.sync_detailed(reference, client=courier, body=ProofUpload.from_dict(upload), idempotency_key=key)
        check(again.status_code == 201 and again.headers.get("idempotent-replayed") == "true"
              and again.parsed.proof_id == stored.parsed.proof_id, f"the same Idempotency-Key replays {name}'s proof")

        metadata = get_proof_metadata.sync(reference, client=dispatcher)
        check(isinstance(metadata, ProofMetadata) and metadata.proof_id == stored.parsed.proof_id,
              f"getProofMetadata is a typed ProofMetadata for {name}")
        check(metadata.ink.format_.value == name, f"metadata.ink.format is {name}")
        # The generator leaves image/png undecoded: a client that does not raise on it keeps the raw bytes.
        png = get_proof_png.sync_detailed(reference, client=raw)
        check(png.status_code == 200 and hashlib.sha256(png.content).hexdigest() == stored.parsed.png_sha256,
              f"getProofPNG returns the PNG whose SHA-256 the receipt gave ({name})")
        delivery = get_delivery.sync(reference, client=dispatcher)
        check(delivery.status.value == "delivered" and delivery.proof.proof_id == stored.parsed.proof_id,
              f"getDelivery shows {reference} delivered with its proof")

    page = search_deliveries.sync(client=dispatcher, status=SearchDeliveriesStatus.DELIVERED, limit=10)
    check(page is not None and len(page.items) >= len(upload_examples), "searchDeliveries lists the delivered deliveries")

    print(json.dumps({"failures": len(failures)}))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
